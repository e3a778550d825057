package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIConfig(t *testing.T) {
	testCases := []struct {
		name         string
		providersDir string
		want         string
	}{
		{
			name:         "the block of the runtime environment page",
			providersDir: "/captf/providers",
			want: `provider_installation {
  filesystem_mirror {
    path    = "/captf/providers"
    include = ["*/*/*"]
  }
  direct {
    exclude = ["*/*/*"]
  }
}
`,
		},
		{
			name:         "a path is quoted as an HCL literal, never interpolated",
			providersDir: `/a "b"\c/${x}/%{y}`,
			want: `provider_installation {
  filesystem_mirror {
    path    = "/a \"b\"\\c/$${x}/%%{y}"
    include = ["*/*/*"]
  }
  direct {
    exclude = ["*/*/*"]
  }
}
`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CLIConfig(tc.providersDir); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestWriteCLIConfig(t *testing.T) {
	testCases := []struct {
		name        string
		setup       func(t *testing.T, root string) string // returns the providers path
		wantWritten bool
	}{
		{
			name: "mirror directory present",
			setup: func(t *testing.T, root string) string {
				return mkdir(t, filepath.Join(root, "providers"))
			},
			wantWritten: true,
		},
		{
			name: "mirror is a symlink to a directory",
			setup: func(t *testing.T, root string) string {
				target := mkdir(t, filepath.Join(root, "real-providers"))
				link := filepath.Join(root, "providers")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				return link
			},
			wantWritten: true,
		},
		{
			name: "no mirror",
			setup: func(t *testing.T, root string) string {
				return filepath.Join(root, "providers")
			},
		},
		{
			name: "a regular file named like the mirror does not count",
			setup: func(t *testing.T, root string) string {
				p := filepath.Join(root, "providers")
				if err := os.WriteFile(p, []byte("not a mirror"), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
		},
		{
			name: "a path below a regular file is no mirror",
			setup: func(t *testing.T, root string) string {
				p := filepath.Join(root, "captf")
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(p, "providers")
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			workdir := mkdir(t, filepath.Join(root, "work"))
			providers := tc.setup(t, root)

			path, written, err := WriteCLIConfig(workdir, providers)
			if err != nil {
				t.Fatalf("WriteCLIConfig: %v", err)
			}
			if written != tc.wantWritten {
				t.Fatalf("written = %v, want %v", written, tc.wantWritten)
			}
			cliPath := filepath.Join(workdir, "cli.tfrc")
			if !tc.wantWritten {
				if path != "" {
					t.Errorf("path = %q, want empty", path)
				}
				if _, err := os.Stat(cliPath); !os.IsNotExist(err) {
					t.Errorf("cli.tfrc exists without a mirror (stat err %v)", err)
				}
				return
			}
			if path != cliPath {
				t.Errorf("path = %q, want %q", path, cliPath)
			}
			assertCLIConfigFile(t, cliPath, providers)
		})
	}
}

func TestWriteCLIConfigReplacesAnExistingFile(t *testing.T) {
	root := t.TempDir()
	workdir := mkdir(t, filepath.Join(root, "work"))
	providers := mkdir(t, filepath.Join(root, "providers"))
	cliPath := filepath.Join(workdir, "cli.tfrc")
	if err := os.WriteFile(cliPath, []byte("a much longer stale configuration that must not survive in any part\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cliPath, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteCLIConfig(workdir, providers); err != nil {
		t.Fatal(err)
	}
	assertCLIConfigFile(t, cliPath, providers)
}

func TestWriteCLIConfigUnwritableWorkdir(t *testing.T) {
	root := t.TempDir()
	providers := mkdir(t, filepath.Join(root, "providers"))
	_, written, err := WriteCLIConfig(filepath.Join(root, "missing-workdir"), providers)
	if err == nil || written {
		t.Fatalf("got written=%v err=%v, want an error", written, err)
	}
}

func TestWriteCLIConfigUncheckableMirror(t *testing.T) {
	// A mirror whose existence cannot be checked fails the run rather than
	// silently switching init to registry downloads.
	workdir := t.TempDir()
	_, written, err := WriteCLIConfig(workdir, filepath.Join(workdir, strings.Repeat("p", 300)))
	if err == nil || written {
		t.Fatalf("got written=%v err=%v, want an error", written, err)
	}
	if _, err := os.Stat(filepath.Join(workdir, "cli.tfrc")); !os.IsNotExist(err) {
		t.Errorf("cli.tfrc written (stat err %v)", err)
	}
}

func assertCLIConfigFile(t *testing.T, path, providers string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != CLIConfig(providers) {
		t.Errorf("content:\n%s\nwant:\n%s", data, CLIConfig(providers))
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("mode = %o, want 600", mode)
	}
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
