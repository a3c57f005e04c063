"""Batches on the bundled model: order kept, failures isolated, resumable, shardable, and the
shared prompt prefix evaluated once. Plus the pure parts (inputs, shards, names, writes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gguf_extract.cli.batch.documents import take_shard
from gguf_extract.cli.batch.results import first_collision, prepare_output_dir, write_atomically
from gguf_extract.cli.exit_codes import UsageError
from gguf_extract.cli.preflight import parse_shard
from gguf_extract.cli.sources import Source, expand_inputs
from gguf_extract.core.errors import OutputError

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 24}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PEOPLE = [
    ("Ada Lovelace", 36),
    ("Alan Turing", 41),
    ("Grace Hopper", 85),
    ("Edsger Dijkstra", 72),
    ("Barbara Liskov", 84),
    ("Donald Knuth", 86),
    ("Margaret Hamilton", 88),
    ("John McCarthy", 84),
    ("Frances Allen", 88),
    ("Ken Thompson", 81),
    ("Radia Perlman", 73),
    ("Tony Hoare", 90),
    ("Niklaus Wirth", 89),
    ("Adele Goldberg", 79),
    ("Leslie Lamport", 83),
    ("Karen Jones", 46),
    ("Dennis Ritchie", 70),
    ("Hedy Lamarr", 85),
    ("Alonzo Church", 92),
    ("Kathleen Booth", 100),
]


def write_documents(folder: Path, bad: dict[int, bytes] | None = None) -> list[Path]:
    """doc00.txt ... doc21.txt: 20 people, and the bad documents at the given positions."""
    folder.mkdir(parents=True, exist_ok=True)
    contents: list[bytes] = [f"{name} is {age} years old.".encode() for name, age in PEOPLE]
    for position, data in sorted((bad or {}).items()):
        contents.insert(position, data)
    paths = []
    for number, data in enumerate(contents):
        path = folder / f"doc{number:02d}.txt"
        path.write_bytes(data)
        paths.append(path)
    return paths


def run_batch(tmp_path: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(schema), "--max-tokens", "40", *args]
    return subprocess.run(command, input=stdin, capture_output=True, env=environment, timeout=600, check=False)


# -- the pure parts -------------------------------------------------------------------------


def test_directories_expand_recursively_in_sorted_order_without_hidden_files(tmp_path: Path) -> None:
    for name in ["b.txt", "a.md", "sub/c.txt", ".hidden.txt", ".git/x.txt", "sub/z.log"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    found = expand_inputs([str(tmp_path)], "*.txt")
    assert [s.name for s in found] == ["b", "sub/c"]
    everything = expand_inputs([str(tmp_path / "b.txt"), str(tmp_path)])
    assert [s.name for s in everything] == ["b", "a", "b", "sub/c", "sub/z"]


@pytest.mark.parametrize("shards", [1, 2, 3, 4, 7, 25])
def test_shards_are_disjoint_and_cover_every_document(shards: int) -> None:
    sources = [Source(Path(f"d{i}.txt"), f"d{i}") for i in range(22)]
    taken = [take_shard(sources, shard, shards) for shard in range(shards)]
    flat = [s for part in taken for s in part]
    assert sorted(s.name for s in flat) == sorted(s.name for s in sources)
    assert len(flat) == len(sources)


@pytest.mark.parametrize("text", ["1", "2/2", "-1/3", "a/b", "1/0", "/3", "5/3"])
def test_bad_shards_are_refused(text: str) -> None:
    with pytest.raises(UsageError):
        parse_shard(text)


def test_two_documents_with_one_result_name_are_found(tmp_path: Path) -> None:
    sources = expand_inputs(["a/x.txt", "c.txt", "b/x.md"])
    assert first_collision(tmp_path, sources) == (sources[0], sources[2], tmp_path / "x.json")
    assert first_collision(tmp_path, sources[:2]) is None


def test_sources_keep_the_path_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "sub" / "a.txt").write_text("x")
    found = expand_inputs(["./docs", "docs/", "./b.txt"])
    assert [s.label for s in found] == ["./docs/sub/a.txt", "docs/sub/a.txt", "./b.txt"]
    assert [s.name for s in found] == ["sub/a", "sub/a", "b"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_results_are_created_with_the_mode_the_umask_gives(tmp_path: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        write_atomically(tmp_path / "r.json", "{}\n")
    finally:
        os.umask(previous)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == mode


def test_atomic_write_leaves_no_partial_file_when_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "r.json"

    def broken_fsync(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, '{"a": 1}\n')
    assert not target.exists() and not list(target.parent.iterdir())


def test_unwritable_output_directory_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="cannot write to output directory"):
        prepare_output_dir(blocker / "out")


# -- on the bundled model ---------------------------------------------------------------------


@pytest.mark.model
def test_batch_of_twenty_two_with_two_bad_documents(tmp_path: Path) -> None:
    paths = write_documents(tmp_path / "docs", bad={7: b"\xff\xfe\x00binary", 15: b"   \n"})
    result = run_batch(tmp_path, str(tmp_path / "docs"), "--stats")
    assert result.returncode == 5, result.stderr.decode()
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [line["source"] for line in lines] == [str(p) for p in paths]
    failed = [i for i, line in enumerate(lines) if "error" in line]
    assert failed == [7, 15]
    assert lines[7]["error"]["type"] == "DocumentError" and "binary" in lines[7]["error"]["message"]
    good = [line for line in lines if "data" in line]
    assert len(good) == 20 and all(set(line["data"]) == {"name", "age"} for line in good)
    assert sum(line["data"]["age"] == age for line, (_, age) in zip(good, PEOPLE, strict=True)) >= 10
    assert "22 documents: 20 extracted, 2 failed" in result.stderr.decode()
    # the shared prefix (instructions and schema) is evaluated for the first document only
    reused = [line["stats"]["prompt_tokens_reused"] for line in good]
    assert reused[0] == 0 and all(r > 20 for r in reused[1:])
    assert len(set(reused[1:])) == 1


@pytest.mark.model
def test_documents_give_the_same_result_alone_and_in_a_batch(tmp_path: Path) -> None:
    paths = write_documents(tmp_path / "docs")[:4]
    in_batch = [json.loads(line)["data"] for line in run_batch(tmp_path, *map(str, paths)).stdout.decode().splitlines()]
    alone = [json.loads(run_batch(tmp_path, str(path)).stdout) for path in paths[2:]]
    assert in_batch[2:] == alone


@pytest.mark.model
def test_files_from_stdin(tmp_path: Path) -> None:
    paths = write_documents(tmp_path / "docs")[:3]
    listing = ("\n".join(str(p) for p in reversed(paths)) + "\n\n").encode()
    result = run_batch(tmp_path, "--files-from", "-", stdin=listing)
    assert result.returncode == 0, result.stderr.decode()
    assert [json.loads(line)["source"] for line in result.stdout.decode().splitlines()] == [str(p) for p in reversed(paths)]


@pytest.mark.model
def test_shards_of_a_batch_cover_it_exactly_once(tmp_path: Path) -> None:
    write_documents(tmp_path / "docs")
    seen: list[str] = []
    for shard in range(3):
        result = run_batch(tmp_path, str(tmp_path / "docs"), "--shard", f"{shard}/3", "--output-dir", str(tmp_path / "out"))
        assert result.returncode == 0, result.stderr.decode()
        seen += [line.split(":")[0] for line in result.stderr.decode().splitlines() if "documents:" in line]
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == [f"doc{n:02d}.json" for n in range(20)]
    assert [line.split()[0] for line in seen] == ["7", "7", "6"]


@pytest.mark.model
def test_interrupted_output_dir_batch_resumes_without_redoing_anything(tmp_path: Path) -> None:
    write_documents(tmp_path / "docs")
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    out = tmp_path / "out"
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(schema), "--max-tokens", "40", str(tmp_path / "docs")]
    process = subprocess.Popen(
        [*command, "--output-dir", str(out)], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(out.glob("*.json"))) < 4:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr.decode()
    assert "Traceback" not in stderr.decode()
    first = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    # what was written and how to go on, not the single-document "stdout does not hold a complete document"
    assert f"interrupted: wrote {len(first)} of 20 results to {out}" in stderr.decode()
    assert "rerun with --skip-existing" in stderr.decode() and "stdout" not in stderr.decode()
    assert 4 <= len(first) < 20 and all(name.endswith(".json") for name in first)  # no temporary files left
    for path in out.iterdir():
        assert set(json.loads(path.read_text())) == {"name", "age"}
    result = run_batch(tmp_path, str(tmp_path / "docs"), "--output-dir", str(out), "--skip-existing")
    assert result.returncode == 0, result.stderr.decode()
    assert f"20 documents: {20 - len(first)} extracted, 0 failed, {len(first)} skipped" in result.stderr.decode()
    assert len(list(out.iterdir())) == 20
    assert all(out.joinpath(name).stat().st_mtime_ns == mtime for name, mtime in first.items())


@pytest.mark.model
def test_workers_give_the_same_lines_in_the_same_order(tmp_path: Path) -> None:
    write_documents(tmp_path / "docs", bad={2: b""})
    for extra in sorted((tmp_path / "docs").iterdir())[8:]:
        extra.unlink()
    # The same --threads (and --parallel 1): the settings docs/batches.md says keep the lines equal.
    single = run_batch(tmp_path, str(tmp_path / "docs"), "--threads", "1")
    parallel = run_batch(tmp_path, str(tmp_path / "docs"), "--workers", "3", "--threads", "1")
    assert single.returncode == parallel.returncode == 5, parallel.stderr.decode()
    assert parallel.stdout == single.stdout and len(parallel.stdout.splitlines()) == 8
    assert "8 documents: 7 extracted, 1 failed" in parallel.stderr.decode()
    written = run_batch(
        tmp_path, str(tmp_path / "docs"), "--workers", "2", "--output-dir", str(tmp_path / "out"), "--indent", "1"
    )
    assert written.returncode == 5
    files = sorted((tmp_path / "out").iterdir())
    assert len(files) == 7 and all(f.read_text().startswith("{\n ") for f in files)


@pytest.mark.model
@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is needed for a pseudo-terminal")
def test_progress_shows_on_a_terminal_and_not_in_a_pipe(tmp_path: Path) -> None:
    write_documents(tmp_path / "docs")
    for extra in sorted((tmp_path / "docs").iterdir())[3:]:
        extra.unlink()
    piped = run_batch(tmp_path, str(tmp_path / "docs"))
    assert "extracting" not in piped.stderr.decode()
    schema = tmp_path / "schema.json"
    command = f"{sys.executable} -m gguf_extract --schema {schema} --max-tokens 40 {tmp_path / 'docs'}"
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    terminal = subprocess.run(
        ["script", "-qec", command, "/dev/null"], capture_output=True, env=environment, timeout=300, check=False
    )
    assert b"extracting" in terminal.stdout and b"tokens/s" in terminal.stdout
    quiet = subprocess.run(
        ["script", "-qec", command + " --quiet", "/dev/null"], capture_output=True, env=environment, timeout=300, check=False
    )
    assert quiet.returncode == 0, quiet.stdout.decode()
    assert b"extracting" not in quiet.stdout and b"3 documents" not in quiet.stdout  # --quiet: no summary either


@pytest.mark.model
def test_seeded_sampling_is_reproducible(tmp_path: Path) -> None:
    write_documents(tmp_path / "docs")
    document = str(tmp_path / "docs" / "doc00.txt")
    # Threads named: another program's load between the runs would change the default count.
    first, second = (run_batch(tmp_path, document, "--temperature", "1.2", "--seed", "7", "--threads", "1") for _ in range(2))
    assert first.returncode == 0 and first.stdout == second.stdout


def test_stdin_alone_with_output_dir_is_told_why_it_has_no_result_file(tmp_path: Path) -> None:
    result = run_batch(tmp_path, "-", "--output-dir", str(tmp_path / "out"), stdin=b"<p>Ada Lovelace, 36</p>")
    err = result.stderr.decode()
    assert result.returncode == 2 and result.stdout == b""
    assert "- (stdin) cannot go to --output-dir: each result there is named after its document's file" in err
    assert "one of several" not in err and "- > out/doc.json" in err
    beside = run_batch(tmp_path, "-", str(tmp_path / "schema.json"), stdin=b"x")
    assert beside.returncode == 2 and "- (stdin) cannot be one of several documents" in beside.stderr.decode()


@pytest.mark.model
def test_an_empty_directory_in_a_batch_is_named_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "only-hidden").mkdir()
    (tmp_path / "only-hidden" / ".notes.txt").write_text("x")
    (tmp_path / "a.txt").write_text("Ada Lovelace is 36.")
    result = run_batch(tmp_path, str(tmp_path / "empty"), str(tmp_path / "a.txt"), str(tmp_path / "only-hidden"))
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert [json.loads(line)["source"] for line in result.stdout.decode().splitlines()] == [str(tmp_path / "a.txt")]
    for folder in ("empty", "only-hidden"):
        assert f"warning: directory {tmp_path / folder} holds no documents (no files matching --glob '*'" in err
