package gate

// Sabotaged gates for the oracle's anti-vacuity tests. They exist only in
// this package's test binary.

// SabotageIgnoreCauses makes every head deliverable at once.
func SabotageIgnoreCauses() Option { return func(c *config) { c.sab |= sabIgnoreCauses } }

// SabotageNoFIFO delivers any queued record whose clock is met, not only
// heads.
func SabotageNoFIFO() Option { return func(c *config) { c.sab |= sabNoFIFO } }

// SabotageUndecodableEmpty treats an undecodable header as the empty clock.
func SabotageUndecodableEmpty() Option { return func(c *config) { c.sab |= sabUndecodableEmpty } }

// SabotageSeedSettled makes Restore seed every settled position one above
// SPEC §3's (head − 1, or fed).
func SabotageSeedSettled() Option { return func(c *config) { c.sab |= sabSeedSettled } }
