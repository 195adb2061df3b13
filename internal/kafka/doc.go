// Package kafka is causalctl's only code that talks to Kafka brokers, and it
// only reads: it never joins a consumer group, never commits an offset and
// never produces. It offers
//
//   - connection settings (ConnOptions) merged from flags, CAUSALCTL_*
//     environment variables and a profile of the config file, and Dial,
//     which fails fast and with a typed error when the cluster cannot be
//     reached or refuses the credentials;
//   - topic identity: Client.Topics lists topics with their UUIDs and
//     per-partition offsets, Client.Names resolves UUIDs to names, and a
//     topic whose UUID changes during a run is an IdentityChangedError
//     (channel-identity-changed);
//   - ranges: ParseOffsets reads rpk's offsets grammar, Client.OpenRange
//     fixes each channel's bounds once (never past the last stable offset)
//     and Range.Next yields capture.Items — a start position, the committed
//     records (read_committed), position advances over offsets that carried
//     no record, and an end position — so every range ends;
//   - followers: Client.Follow reads the same item stream without end,
//     waiting at the log end, and reports the latest log ends. Range and
//     Follower are two types over one fetch loop (fetch.go); time is
//     injected with WithClock;
//   - Client.GroupOffsets, which reads a group's committed offsets for use
//     as start positions.
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
//
// Each setting is taken from the first of: a flag the user gave, its
// environment variable (see EnvVars), the selected profile, the default.
package kafka
