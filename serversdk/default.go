package serversdk

import (
	"context"
	"time"
)

// Default is the SDK the package-level functions use, with default Options.
var Default = New(Options{})

// InitSDK calls Default.InitSDK with the parameters.
func InitSDK(params ServerParameters) error { return Default.InitSDK(context.Background(), params) }

// InitSDKFromEnvironment calls InitSDK with every parameter from the environment (§1.1).
func InitSDKFromEnvironment() error { return InitSDK(ServerParameters{}) }

// ProcessReady calls Default.ProcessReady.
func ProcessReady(p ProcessParameters) error { return Default.ProcessReady(context.Background(), p) }

// ActivateGameSession calls Default.ActivateGameSession.
func ActivateGameSession() error { return Default.ActivateGameSession(context.Background()) }

// AcceptPlayerSession calls Default.AcceptPlayerSession.
func AcceptPlayerSession(id string) error {
	return Default.AcceptPlayerSession(context.Background(), id)
}

// RemovePlayerSession calls Default.RemovePlayerSession.
func RemovePlayerSession(id string) error {
	return Default.RemovePlayerSession(context.Background(), id)
}

// GetGameSessionId calls Default.GetGameSessionId.
func GetGameSessionId() (string, error) { return Default.GetGameSessionId() } //nolint:revive

// GetTerminationTime calls Default.GetTerminationTime.
func GetTerminationTime() (time.Time, bool) { return Default.GetTerminationTime() }

// ProcessEnding calls Default.ProcessEnding.
func ProcessEnding() error { return Default.ProcessEnding(context.Background()) }

// Destroy calls Default.Destroy.
func Destroy() error { return Default.Destroy() }
