package relay

import (
	"context"
	"errors"
	"os"
	"time"
)

var errNoReader = errors.New("no reader on the FIFO")

var errWindows = errors.New("the relay does not run on Windows: the governed shell does not")

func openIn(path string) (*os.File, error) { return nil, errWindows }

func openOut(ctx context.Context, path string, timeout time.Duration) (*os.File, error) {
	return nil, errWindows
}
