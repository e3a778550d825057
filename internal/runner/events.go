package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
)

// ReportingController names the runner in the events it posts.
const ReportingController = "captf.io/runner"

// Runner event reasons.
const (
	EventRunStarted       = "RunStarted"
	EventStepStarted      = "StepStarted"
	EventStepSucceeded    = "StepSucceeded"
	EventStepFailed       = "StepFailed"
	EventPlanSummary      = "PlanSummary"
	EventResourcesChanged = "ResourcesChanged"
	EventRunFinished      = "RunFinished"
)

const (
	// eventTimeout bounds one event's request: events never slow a run.
	eventTimeout = 2 * time.Second
	// maxEventFailures stops posting after that many failures in a row.
	maxEventFailures = 3
	// maxEventNote caps a note.
	maxEventNote = 512
)

// events posts best-effort progress events on the object (--event-object),
// related to the Job (--job-name). A nil *events posts nothing. Notes carry
// step names, exit codes, durations, counts and curated summaries; never
// inputs, outputs, plan values or raw output.
type events struct {
	client    eventsv1client.EventsGetter
	regarding corev1.ObjectReference
	related   *corev1.ObjectReference
	instance  string
	failures  int
	log       io.Writer
}

// parseEventObject reads <apiVersion>/<kind>/<namespace>/<name>/<uid>; the
// apiVersion may itself hold a slash.
func parseEventObject(s string) (corev1.ObjectReference, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 5 {
		return corev1.ObjectReference{}, fmt.Errorf("--event-object %q is not <apiVersion>/<kind>/<namespace>/<name>/<uid>", s)
	}
	n := len(parts)
	return corev1.ObjectReference{
		APIVersion: strings.Join(parts[:n-4], "/"), Kind: parts[n-4], Namespace: parts[n-3], Name: parts[n-2], UID: types.UID(parts[n-1]),
	}, nil
}

// newEvents returns nil, and the run goes on without events, when no
// object is named or the API server cannot be reached.
func newEvents(o Options, stderr io.Writer) *events {
	if o.EventObject == "" {
		return nil
	}
	e, err := connectEvents(o)
	if err != nil {
		fmt.Fprintf(stderr, "Not posting progress events: %v\n", err)
		return nil
	}
	e.log = stderr
	return e
}

func connectEvents(o Options) (*events, error) {
	ref, err := parseEventObject(o.EventObject)
	if err != nil {
		return nil, err
	}
	b, err := parseBackend(o.BackendConfig)
	if err != nil {
		return nil, err
	}
	cfg, err := b.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := eventsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	e := &events{client: c, regarding: ref, log: io.Discard}
	if o.JobName != "" {
		e.related = &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: ref.Namespace, Name: o.JobName}
	}
	e.instance, _ = os.Hostname()
	return e, nil
}

// post creates one event; failures only count toward giving up.
func (e *events) post(warning bool, reason, action, note string) {
	if e == nil || e.failures >= maxEventFailures {
		return
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	if len(note) > maxEventNote {
		note = truncateUTF8(note, maxEventNote)
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{GenerateName: e.regarding.Name + "-", Namespace: e.regarding.Namespace},
		EventTime:           metav1.NowMicro(),
		ReportingController: ReportingController,
		ReportingInstance:   e.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           e.regarding,
		Related:             e.related,
		Note:                note,
		Type:                typ,
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if _, err := e.client.Events(e.regarding.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		e.failures++
		fmt.Fprintf(e.log, "Could not post event %s (%d of %d failures before giving up): %s\n", reason, e.failures, maxEventFailures, err)
		return
	}
	e.failures = 0
}
