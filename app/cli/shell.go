package cli

import (
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/shellclient"
)

// shellClient is the client exec, explain and mcp run their calls with
// (service/shellclient): through the running service, else in this
// process under the configuration loadConfig loads. A --config file
// (configFile) is a configuration the service does not run: its calls run
// here.
func shellClient(env *Env, configFile string, oneShot bool, logger *slog.Logger) (*shellclient.Client, error) {
	opts, err := loadOptions(env, configFile)
	if err != nil {
		return nil, err
	}
	return &shellclient.Client{
		Paths: userPaths(env, opts),
		Load: func() (*policy.Loaded, error) {
			l, _, err := loadConfig(env, configFile)
			return l, err
		},
		Local:   configFile != "",
		OneShot: oneShot,
		Logger:  logger,
	}, nil
}
