package inputs_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

func cm(name string, format infrav1.VariablesFormat, data map[string]string) inputs.Source {
	s := inputs.Source{Kind: inputs.SourceConfigMap, Name: name, Found: true, Labelled: true, Format: format, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func secret(name string, format infrav1.VariablesFormat, data map[string]string) inputs.Source {
	s := cm(name, format, data)
	s.Kind = inputs.SourceSecret
	return s
}

func inline(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }

func TestMergeVariables(t *testing.T) {
	missing := inputs.Source{Kind: inputs.SourceConfigMap, Name: "gone"}
	unlabelled := cm("plain", "", map[string]string{"size": "9"})
	unlabelled.Labelled = false
	optional := func(s inputs.Source) inputs.Source { s.Optional = true; return s }

	testCases := []struct {
		name          string
		inline        *apiextensionsv1.JSON
		sources       []inputs.Source
		want          map[string]string
		wantSensitive map[string]bool
		wantNotFound  *inputs.SourceNotFoundError
		wantInvalid   *inputs.InvalidVariableError
	}{
		{name: "nothing", want: map[string]string{}, wantSensitive: map[string]bool{}},
		{
			name:          "String format passes strings, even numbers",
			sources:       []inputs.Source{cm("a", infrav1.VariablesFormatString, map[string]string{"size": "40", "tags": `{"x":1}`})},
			want:          map[string]string{"size": `"40"`, "tags": `"{\"x\":1}"`},
			wantSensitive: map[string]bool{},
		},
		{
			name:          "unset format is String",
			sources:       []inputs.Source{cm("a", "", map[string]string{"size": "40"})},
			want:          map[string]string{"size": `"40"`},
			wantSensitive: map[string]bool{},
		},
		{
			name:          "JSON format parses",
			sources:       []inputs.Source{cm("a", infrav1.VariablesFormatJSON, map[string]string{"size": "40", "tags": "{ \"x\" : [1, true] }", "s": `"<b>"`})},
			want:          map[string]string{"size": `40`, "tags": `{"x":[1,true]}`, "s": `"<b>"`},
			wantSensitive: map[string]bool{},
		},
		{
			name: "later sources win per key",
			sources: []inputs.Source{
				cm("a", "", map[string]string{"size": "1", "zone": "a"}),
				cm("b", "", map[string]string{"size": "2"}),
			},
			want:          map[string]string{"size": `"2"`, "zone": `"a"`},
			wantSensitive: map[string]bool{},
		},
		{
			name:          "inline wins over all",
			inline:        inline(`{"size": 3, "extra": {"k": "v"}}`),
			sources:       []inputs.Source{cm("a", "", map[string]string{"size": "1"}), secret("s", "", map[string]string{"size": "2"})},
			want:          map[string]string{"size": `3`, "extra": `{"k":"v"}`},
			wantSensitive: map[string]bool{},
		},
		{
			name:          "a winning Secret value is sensitive",
			sources:       []inputs.Source{cm("a", "", map[string]string{"token": "public", "zone": "a"}), secret("s", "", map[string]string{"token": "hunter2"})},
			want:          map[string]string{"token": `"hunter2"`, "zone": `"a"`},
			wantSensitive: map[string]bool{"token": true},
		},
		{
			name:          "a ConfigMap after a Secret makes the value not sensitive",
			sources:       []inputs.Source{secret("s", "", map[string]string{"token": "hunter2"}), cm("a", "", map[string]string{"token": "public"})},
			want:          map[string]string{"token": `"public"`},
			wantSensitive: map[string]bool{},
		},
		{
			name:          "optional missing and unlabelled sources contribute nothing",
			sources:       []inputs.Source{optional(missing), optional(unlabelled), cm("a", "", map[string]string{"zone": "a"})},
			want:          map[string]string{"zone": `"a"`},
			wantSensitive: map[string]bool{},
		},
		{
			name:         "missing required source",
			sources:      []inputs.Source{cm("a", "", nil), missing},
			wantNotFound: &inputs.SourceNotFoundError{Kind: inputs.SourceConfigMap, Name: "gone"},
		},
		{
			name:         "unlabelled required source",
			sources:      []inputs.Source{unlabelled},
			wantNotFound: &inputs.SourceNotFoundError{Kind: inputs.SourceConfigMap, Name: "plain", Unlabelled: true},
		},
		{
			name:        "invalid JSON names the source and key",
			sources:     []inputs.Source{secret("creds", infrav1.VariablesFormatJSON, map[string]string{"api_key": "sk-live-{not json"})},
			wantInvalid: &inputs.InvalidVariableError{Source: "Secret creds", Key: "api_key", Reason: "is not valid JSON (format JSON)"},
		},
		{
			name:        "two JSON documents are invalid",
			sources:     []inputs.Source{cm("a", infrav1.VariablesFormatJSON, map[string]string{"x": "1 2"})},
			wantInvalid: &inputs.InvalidVariableError{Source: "ConfigMap a", Key: "x", Reason: "is not valid JSON (format JSON)"},
		},
		{
			name:        "non-UTF-8 value",
			sources:     []inputs.Source{cm("a", "", map[string]string{"x": "\xff\xfe"})},
			wantInvalid: &inputs.InvalidVariableError{Source: "ConfigMap a", Key: "x", Reason: "is not UTF-8"},
		},
		{
			name:        "reserved prefix in a source",
			sources:     []inputs.Source{cm("a", "", map[string]string{"captf_x": "1"})},
			wantInvalid: &inputs.InvalidVariableError{Source: "ConfigMap a", Key: "captf_x", Reason: "uses the reserved prefix captf_"},
		},
		{
			name:        "meta-argument in a source",
			sources:     []inputs.Source{cm("a", "", map[string]string{"count": "1"})},
			wantInvalid: &inputs.InvalidVariableError{Source: "ConfigMap a", Key: "count", Reason: "is a module meta-argument"},
		},
		{
			name:        "key that is no variable name",
			sources:     []inputs.Source{cm("a", "", map[string]string{"app.conf": "1"})},
			wantInvalid: &inputs.InvalidVariableError{Source: "ConfigMap a", Key: "app.conf", Reason: "is not a valid variable name: use letters, digits, _ and -, not starting with a digit or -"},
		},
		{
			name:        "inline that is not an object",
			inline:      inline(`[1]`),
			wantInvalid: &inputs.InvalidVariableError{Source: "spec.variables", Reason: "is not a JSON object"},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			values, sensitive, err := inputs.MergeVariables(tc.inline, tc.sources)
			var notFound *inputs.SourceNotFoundError
			var invalid *inputs.InvalidVariableError
			switch {
			case tc.wantNotFound != nil:
				if !errors.As(err, &notFound) || *notFound != *tc.wantNotFound {
					t.Fatalf("error %v, want %+v", err, tc.wantNotFound)
				}
				return
			case tc.wantInvalid != nil:
				if !errors.As(err, &invalid) || *invalid != *tc.wantInvalid {
					t.Fatalf("error %#v, want %+v", err, tc.wantInvalid)
				}
				if strings.Contains(err.Error(), "sk-live") {
					t.Error("the error quotes the value")
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range values {
				got[k] = string(v)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("values %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(sensitive, tc.wantSensitive) {
				t.Errorf("sensitive %v, want %v", sensitive, tc.wantSensitive)
			}
		})
	}
}

func TestSourcesFromObjects(t *testing.T) {
	labelled := metav1.ObjectMeta{Name: "vars", Labels: map[string]string{"captf.io/variables": "true"}}
	ref := infrav1.VariablesFromSource{ConfigMapRef: &infrav1.LocalObjectReference{Name: "vars"}, Optional: ptr.To(true), Format: infrav1.VariablesFormatJSON}
	s := inputs.SourceFromConfigMap(ref, &corev1.ConfigMap{ObjectMeta: labelled, Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": []byte("2")}})
	want := inputs.Source{Kind: inputs.SourceConfigMap, Name: "vars", Found: true, Labelled: true, Optional: true, Format: infrav1.VariablesFormatJSON,
		Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("ConfigMap source %+v, want %+v", s, want)
	}
	sref := infrav1.VariablesFromSource{SecretRef: &infrav1.LocalObjectReference{Name: "creds"}}
	if s := inputs.SourceFromSecret(sref, nil); s.Found || s.Name != "creds" || s.Kind != inputs.SourceSecret || s.Optional {
		t.Errorf("missing Secret source %+v", s)
	}
	unlabelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Labels: map[string]string{"captf.io/variables": "yes"}}}
	if s := inputs.SourceFromSecret(sref, unlabelled); !s.Found || s.Labelled {
		t.Errorf("unlabelled Secret source %+v", s)
	}
}

func TestFiles(t *testing.T) {
	r := machineRole()
	roleTfvars, err := r.Tfvars()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("without variables the tfvars are the role inputs", func(t *testing.T) {
		mainTF, tfvars, err := inputs.Files(contract.RoleMachine, roleTfvars, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(tfvars) != string(roleTfvars) {
			t.Error("tfvars changed")
		}
		want, _ := inputs.Root(contract.RoleMachine, nil)
		if string(mainTF) != string(want) {
			t.Error("main.tf.json differs from Root")
		}
	})
	t.Run("with variables", func(t *testing.T) {
		values, sensitive, err := inputs.MergeVariables(inline(`{"size":"<big>"}`), []inputs.Source{secret("s", "", map[string]string{"api_key": "k"})})
		if err != nil {
			t.Fatal(err)
		}
		mainTF, tfvars, err := inputs.Files(contract.RoleMachine, roleTfvars, values, sensitive)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "machine-with-variables.tfvars.json", tfvars)
		golden(t, "machine-with-variables.main.tf.json", mainTF)
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(tfvars, &doc); err != nil {
			t.Fatal(err)
		}
		if string(doc["size"]) != `"<big>"` || string(doc["api_key"]) != `"k"` {
			t.Errorf("variables rendered as %s and %s", doc["size"], doc["api_key"])
		}
		var root struct {
			Variable map[string]map[string]any `json:"variable"`
		}
		_ = json.Unmarshal(mainTF, &root)
		if root.Variable["api_key"]["sensitive"] != true || root.Variable["size"]["sensitive"] != nil {
			t.Errorf("sensitivity in the root: %v", root.Variable)
		}
	})
	t.Run("a variable named like a contract input", func(t *testing.T) {
		_, _, err := inputs.Files(contract.RoleMachine, roleTfvars, map[string]json.RawMessage{"machine_name": json.RawMessage(`"x"`)}, nil)
		var invalid *inputs.InvalidVariableError
		if !errors.As(err, &invalid) || invalid.Key != "machine_name" {
			t.Errorf("error %v", err)
		}
		// Another role's input is a fine variable name.
		if _, _, err := inputs.Files(contract.RoleMachine, roleTfvars, map[string]json.RawMessage{"replicas": json.RawMessage(`3`)}, nil); err != nil {
			t.Error(err)
		}
	})
}
