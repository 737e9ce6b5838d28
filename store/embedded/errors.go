package embedded

import "errors"

var errClosed = errors.New("embedded store is closed")
