// Package stub is the inline probes' code as the engine copies it into a
// target (inlinecode/probe.S, embedded as probe.bin) and the layout it
// shares with the engine: the data block (thread table, thread states,
// shadow stacks, side records), the rings and their events, and the
// flags of an event's id. Every offset here mirrors a `.set` of probe.S,
// and a test checks each against the assembled source.
package stub
