// Package lint owns what tfcapi-lint reports and how: findings (an ID of
// the documented check table, a severity, a place and a message), the
// report a run prints as text or JSON, its sorting and summary line, the
// --allow-warning and --strict rules, and the exit codes. The checks
// themselves live in modulecheck (a module directory) and imagecheck (a
// module image); both return findings of this package.
package lint
