//go:build !cuda

package runtime

import "github.com/cudagraph-capguard/capguard/runtime/backend"

const cudaBuilt = false

const noCUDA = "this capguard was built without the cuda backend: build it with scripts/build-cuda.sh " +
	"(go build -tags cuda, against the CUDA driver headers), or use --backend sim"

func openCUDA(int) (backend.Backend, error) { return nil, &UnavailableError{noCUDA} }

func cudaDevices() (int, error) { return 0, &UnavailableError{noCUDA} }
