// Package conditions holds the rules that turn what a pass observed and
// decided into what it reports:
//
//   - Deleting and Paused, which every pass reports (Lifecycle);
//   - InputsApplied;
//   - what a decision to wait reports, and on which condition (Wait);
//   - what a finished Job reports, condition and event (Job), and what a
//     started, a running and a vanished Job report;
//   - whether the state can be read (StateReadable, StateLocked);
//   - what a drift check and the applies after it report (DriftDetected);
//   - which changes of a condition emit an event (Transitions);
//   - how each condition type goes from one pass to the next (Owner): a
//     fact of one step of the pass, said by every pass that runs the
//     step, a record kept until a newer one, or the summary;
//   - Ready's summary of the others, the condition each operation reports
//     on, and the conditions of a first visit.
//
// Event is the one event type of a pass, a role's included.
//
// It is pure: it reads no object and no clock and links no client (a wall
// test checks its dependency closure), so that every rule is a row of a
// table test. The engine (internal/workspace) gathers the facts, calls
// these rules and writes the result in its one status patch.
package conditions
