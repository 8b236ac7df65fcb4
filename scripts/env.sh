# Sourced by the scripts: the CUDA toolkit on PATH when it lives in /usr/local/cuda.
if [[ -d /usr/local/cuda/bin && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
