//go:build !linux

package sandbox

import "os"

func growPipe(*os.File) {}

func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }
