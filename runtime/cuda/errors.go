//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// kindOf classifies a CUresult.
func kindOf(code int) backend.Kind {
	switch {
	case code >= 900 && code <= 908: // CUDA_ERROR_STREAM_CAPTURE_*
		return backend.Capture
	case code == 700, code == 702, code == 710, code == 714, code == 715,
		code == 716, code == 717, code == 718, code == 719, code == 999:
		// illegal address, launch timeout, assert, hardware stack error,
		// illegal instruction, misaligned address, invalid address space,
		// invalid pc, launch failed, unknown
		return backend.Fault
	}
	return backend.Other
}

func newError(op string, code int, msg string) error {
	return &backend.Error{Op: op, Code: code, Kind: kindOf(code), Msg: msg}
}

// wrap turns an error of gorgonia.org/cu (an unexported int type) into a
// classified *backend.Error.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var be *backend.Error
	if errors.As(err, &be) {
		return err
	}
	v := reflect.ValueOf(err)
	switch v.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return newError(op, int(v.Int()), err.Error())
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unavailable is an error saying the device cannot be used here.
type unavailable struct{ msg string }

func (u *unavailable) Error() string { return u.msg }

// IsUnavailable reports whether err says there is no usable device.
func IsUnavailable(err error) bool {
	var u *unavailable
	return errors.As(err, &u)
}
