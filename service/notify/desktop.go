package notify

import (
	"sync"

	"github.com/gen2brain/beeep"
)

// AppName is the application name notifications carry.
const AppName = "Gatehouse"

// Desktop sends through the platform's notification service (D-Bus
// org.freedesktop.Notifications on Linux, Notification Center on macOS,
// toasts on Windows) via beeep.
type Desktop struct{}

// Send implements Sender.
func (Desktop) Send(title, body string) error {
	if err := checkSession(); err != nil {
		return err
	}
	setAppName.Do(func() { beeep.AppName = AppName })
	return beeep.Notify(title, forServer(body), "")
}

var setAppName sync.Once
