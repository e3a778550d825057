package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"captf.io/captf/pkg/state"
)

// cliConfigName is the CLI configuration file the runner writes under its
// working directory.
const cliConfigName = "cli.tfrc"

// CLIConfigPath returns where WriteCLIConfig writes the CLI configuration,
// the value TF_CLI_CONFIG_FILE points at.
func CLIConfigPath(workdir string) string {
	return filepath.Join(workdir, cliConfigName)
}

// CLIConfig returns the CLI configuration that makes init install every
// provider from the image's filesystem mirror at providersDir and never
// contact a registry: the three-segment wildcard matches every registry
// host, so a provider missing from the mirror fails init clearly instead of
// being downloaded.
func CLIConfig(providersDir string) string {
	return `provider_installation {
  filesystem_mirror {
    path    = ` + state.HCLString(providersDir) + `
    include = ["*/*/*"]
  }
  direct {
    exclude = ["*/*/*"]
  }
}
`
}

// WriteCLIConfig writes CLIConfig(providersDir) to <workdir>/cli.tfrc with
// mode 0600 when providersDir exists and is a directory (or a symlink to
// one). Without a mirror it writes nothing and returns written false; init
// then falls back to the runtime's direct installation. An error other
// than the mirror's absence (for instance a permission error) is returned
// rather than silently switching to direct installation.
func WriteCLIConfig(workdir, providersDir string) (path string, written bool, err error) {
	info, err := os.Stat(providersDir)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("checking provider mirror %s: %w", providersDir, err)
	case !info.IsDir():
		return "", false, nil
	}

	path = CLIConfigPath(workdir)
	if err := WritePrivate(path, []byte(CLIConfig(providersDir))); err != nil {
		return "", false, fmt.Errorf("writing CLI configuration: %w", err)
	}
	return path, true, nil
}

// WritePrivate writes data to path and leaves it with mode 0600 whatever
// the umask or the mode of a file already there: the files it writes hold
// inputs (credentials, bootstrap data) only their owner may read.
func WritePrivate(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
