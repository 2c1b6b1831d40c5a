package runtime

import (
	"errors"
	"fmt"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/runtime/sim"
)

// UnavailableError says a backend or device cannot be used here, and what to
// do about it. The CLI exits 2 on it.
type UnavailableError struct{ Msg string }

func (e *UnavailableError) Error() string { return e.Msg }

// IsUnavailable reports whether err is or wraps an *UnavailableError.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}

// CUDAAvailable reports whether this build has the cuda backend (build tag
// cuda). The default build does not: gorgonia.org/cu initialises the driver
// in its package init and exits the process where there is none.
func CUDAAvailable() bool { return cudaBuilt }

// ResolveBackend turns "auto" into "cuda" in a cuda build and "sim"
// otherwise, and checks the name.
func ResolveBackend(name string) (string, error) {
	switch name {
	case "", "auto":
		if cudaBuilt {
			return "cuda", nil
		}
		return "sim", nil
	case "sim", "cuda":
		return name, nil
	}
	return "", fmt.Errorf("unknown backend %q (auto, sim or cuda)", name)
}

// Open opens device on the named backend ("auto", "sim" or "cuda"). A cuda
// backend runs every call on its own goroutine with a locked OS thread, in a
// context of its own (not the device's primary context), so a fault in the
// checker leaves the process's other CUDA work alone.
func Open(name string, device int) (backend.Backend, error) {
	name, err := ResolveBackend(name)
	if err != nil {
		return nil, err
	}
	if name == "sim" {
		if device != 0 {
			return nil, &UnavailableError{fmt.Sprintf("the sim backend has one device (0), not %d", device)}
		}
		return sim.Open(sim.Options{}), nil
	}
	return openCUDA(device)
}

// Devices is the number of devices the named backend sees.
func Devices(name string) (int, error) {
	name, err := ResolveBackend(name)
	if err != nil {
		return 0, err
	}
	if name == "sim" {
		return 1, nil
	}
	return cudaDevices()
}
