//go:build cuda

package runtime

import (
	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/runtime/cuda"
)

const cudaBuilt = true

func openCUDA(device int) (backend.Backend, error) {
	b, err := cuda.Open(device)
	if err != nil && cuda.IsUnavailable(err) {
		return nil, &UnavailableError{err.Error()}
	}
	return b, err
}

func cudaDevices() (int, error) {
	n, err := cuda.Devices()
	if err != nil {
		return 0, &UnavailableError{err.Error()}
	}
	if n == 0 {
		return 0, &UnavailableError{"the CUDA driver sees no device: check nvidia-smi, CUDA_VISIBLE_DEVICES and the container's GPU access"}
	}
	return n, nil
}
