// Package conn holds causalctl's connection settings: one table of
// settings (Settings) from which the command-line flags, the CAUSALCTL_*
// environment variables, the config file's profile keys, their precedence
// and the documentation (docs/connection-settings.md) are all derived.
// Options.Resolve merges them into the plain kafka.Config that Dial takes.
//
// Each setting is taken from the first of: a flag the user gave, its
// environment variable, the selected profile, the default (Precedence).
//
// # Config file
//
// The config file is YAML at $XDG_CONFIG_HOME/causalctl/config.yaml (or
// $HOME/.config/causalctl/config.yaml), or where --config or
// CAUSALCTL_CONFIG says. It holds named profiles; --profile or
// CAUSALCTL_PROFILE selects one, else current_profile does. Unknown keys are
// errors. Passwords are never written in it: a profile names an environment
// variable (password_env) or a file (password_file) that holds the password.
// Relative paths are relative to the config file; ~/ is $HOME.
//
//	current_profile: prod
//	profiles:
//	  local:
//	    brokers: [localhost:9092]
//	  prod:
//	    brokers: [kafka-1.example.com:9093, kafka-2.example.com:9093]
//	    tls:
//	      ca: /etc/kafka/ca.pem        # any tls key turns TLS on; enabled: false turns it off
//	      cert: client.pem             # with key, for mutual TLS
//	      key: client-key.pem
//	      server_name: kafka.example.com
//	      insecure_skip_verify: false
//	    sasl:
//	      mechanism: SCRAM-SHA-512     # PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
//	      user: causalctl
//	      password_env: PROD_KAFKA_PASSWORD   # or password_file: ~/.config/causalctl/prod.pw
//	    dial_timeout: 5s
//	    request_timeout: 30s
package conn

// The documentation of the settings is generated from the table.
//go:generate go run ./gen ../../docs/connection-settings.md
