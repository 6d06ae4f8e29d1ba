package socket

import "errors"

var errNotUnix = errors.New("not a unix socket connection")
