// Package kafka is causalctl's only code that talks to Kafka brokers, and it
// only reads: it never joins a consumer group, never commits an offset and
// never produces. It offers
//
//   - Dial, which connects with a plain Config (internal/conn builds it
//     from flags, environment and config file; this package knows no
//     command line) and fails fast and with a typed error when the cluster
//     cannot be reached or refuses the credentials;
//   - topic identity: Client.Topics lists topics with their UUIDs and
//     per-partition offsets, Client.Names resolves UUIDs to names, and a
//     topic whose UUID changes during a run is an IdentityChangedError
//     (channel-identity-changed);
//   - ranges: ParseOffsets reads rpk's offsets grammar, Client.OpenRange
//     fixes each channel's bounds once (never past the last stable offset)
//     and Range.Next yields record.Items — a start position, the committed
//     records (read_committed), position advances over offsets that carried
//     no record, and an end position — so every range ends; Range.NextOf
//     yields one channel's items, for callers that merge channels;
//   - followers: Client.Follow reads the same item stream without end,
//     waiting at the log end, and reports the latest log ends. Range and
//     Follower are two types over one fetch loop (fetch.go); time is
//     injected with WithClock. The loop keeps the next fetch in flight
//     while the caller takes what the last one read, decodes record
//     batches in place (batch.go) and bounds what it buffers (buffer.go);
//     a Range reuses item storage, so its items are valid until the next
//     call, while a Follower's stay valid;
//   - Client.GroupOffsets, which reads a group's committed offsets for use
//     as start positions.
package kafka
