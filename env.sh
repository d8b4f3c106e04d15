# Source once per shell (bash, zsh): ReFrame then loads gpucomm's configuration without -C,
#     . /path/to/gpucomm/env.sh && reframe -c checks/ -r
# ReFrame 4.10 reads its configuration from -C, RFM_CONFIG_FILES or RFM_CONFIG_PATH only (no
# default file): without one it runs its builtin 'generic' system, where checks/config.py fails.
if [ -n "${BASH_SOURCE:-}" ]; then _gpucomm_here=$(dirname -- "${BASH_SOURCE[0]}")
elif [ -n "${ZSH_VERSION:-}" ]; then _gpucomm_here=$(dirname -- "${(%):-%x}")
else _gpucomm_here=.; fi
export RFM_CONFIG_FILES="$(cd -- "$_gpucomm_here" && pwd)/config/settings.py"
unset _gpucomm_here
