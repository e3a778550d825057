package setup

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	logsv1 "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"captf.io/captf/internal/metrics"
)

// LoggingOptions are component-base's logging flags and the feature gates
// that guard them (CAPTF registers no gates of its own). They configure
// the process-wide klog logger, which controller-runtime logs through.
type LoggingOptions struct {
	Config      *logsv1.LoggingConfiguration
	FeatureGate featuregate.MutableVersionedFeatureGate
}

// DefaultVerbosity is the default of -v: it shows the flow of the
// lifecycle; lower levels keep errors and irreversible actions.
const DefaultVerbosity = 2

// NewLoggingOptions returns the logging defaults: text format, -v=2.
func NewLoggingOptions() *LoggingOptions {
	c := logsv1.NewLoggingConfiguration()
	c.Verbosity = DefaultVerbosity
	fg := featuregate.NewFeatureGate()
	runtime.Must(logsv1.AddFeatureGates(fg))
	return &LoggingOptions{Config: c, FeatureGate: fg}
}

// AddFlags registers --logging-format, -v, --vmodule, --log-flush-frequency,
// the alpha --log-{text,json}-* flags and --feature-gates.
func (l *LoggingOptions) AddFlags(fs *pflag.FlagSet) {
	logsv1.AddFlags(l.Config, fs)
	l.FeatureGate.AddFlag(fs)
}

// loggingFlags maps the logging configuration's field paths to the flags
// that set them.
var loggingFlags = map[string]string{
	"flushFrequency":              "--log-flush-frequency",
	"format":                      "--logging-format",
	"verbosity":                   "--v",
	"vmodule":                     "--vmodule",
	"options.text.splitStream":    "--log-text-split-stream",
	"options.text.infoBufferSize": "--log-text-info-buffer-size",
	"options.json.splitStream":    "--log-json-split-stream",
	"options.json.infoBufferSize": "--log-json-info-buffer-size",
}

// Validate refuses logging flags the logger cannot apply, naming the flag.
func (l *LoggingOptions) Validate() error {
	var errs []error
	for _, e := range logsv1.Validate(l.Config, l.FeatureGate, nil) {
		path, _, _ := strings.Cut(e.Field, "[")
		flag := loggingFlags[path]
		if flag == "" {
			flag = "a logging flag (" + e.Field + ")"
		}
		msg := fmt.Sprintf("%s: %s", flag, e.ErrorBody())
		if path == "format" && e.Type == field.ErrorTypeInvalid {
			msg += "; use text or json"
		}
		if strings.Contains(e.Detail, string(logsv1.LoggingAlphaOptions)) {
			msg += "; enable it with --feature-gates=LoggingAlphaOptions=true"
		}
		if strings.Contains(e.Detail, string(logsv1.LoggingBetaOptions)) {
			msg += "; enable it with --feature-gates=LoggingBetaOptions=true"
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// Apply configures the process's logger from the flags (once per process)
// and exports the feature gates as kubernetes_feature_enabled.
func (l *LoggingOptions) Apply() error {
	if err := l.Validate(); err != nil {
		return err
	}
	if err := logsv1.ValidateAndApply(l.Config, l.FeatureGate); err != nil {
		return fmt.Errorf("applying the logging flags: %w", err)
	}
	ctrl.SetLogger(klog.Background())
	for name, spec := range l.FeatureGate.GetAll() {
		metrics.RecordFeature(string(name), string(spec.PreRelease), l.FeatureGate.Enabled(name))
	}
	return nil
}
