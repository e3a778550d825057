package runner

// RescueErroredState lets the external tests drive the rescue alone.
var RescueErroredState = rescueErroredState
