"""What the command does around extraction, through the real command in a subprocess: a review
page never replaces a file it was not asked to (refused before the model loads, exit 2) and
shows every document, failed ones too; a result left at a path is read only as a regular file of
bounded size; an error nobody foresaw is one line and exit 70, and a batch goes on past it; a
reader that leaves stdout ends the run quietly with 141; workers that ask for more cores than
the machine has are named once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import NO_MODEL, SCHEMA, assert_usage_error

LINE = "Ada Lovelace was 36 years old.\n"


def run(tmp_path: Path, *args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    prefix = [] if args[:1] == ("text",) else ["--max-tokens", "40"]
    command = [sys.executable, "-m", "gguf_extract", *prefix, *args]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, env=environment, timeout=600, check=False, cwd=tmp_path)


def run_patched(tmp_path: Path, patch: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """The command with `patch` (Python) run first: how a test makes a bug happen where it wants one."""
    script = f"import sys\n{patch}\nsys.argv = ['extract', *sys.argv[1:]]\nfrom gguf_extract.cli.app import main\nmain()\n"
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, env=environment, timeout=600, check=False, cwd=tmp_path
    )


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "person.json"
    path.write_text(json.dumps(SCHEMA))
    (tmp_path / "person.txt").write_text(LINE)
    return path


# --review never replaces what it was not asked to, and is checked before the model loads


@pytest.mark.parametrize("option", [[], ["--overwrite"]])
@pytest.mark.parametrize(
    ("page", "what"), [("person.txt", "the input document person.txt"), ("person.json", "the schema file person.json")]
)
def test_the_review_page_never_replaces_the_document_or_the_schema(
    tmp_path: Path, schema: Path, page: str, what: str, option: list[str]
) -> None:
    before = (tmp_path / page).read_bytes()
    result = run(tmp_path, "--schema", "person.json", "person.txt", "--review", page, "--model", NO_MODEL, *option)
    assert_usage_error(result, f"refusing to write the review page to {page}: that is {what}")
    assert (tmp_path / page).read_bytes() == before


def test_the_review_page_never_replaces_the_path_list_or_a_document_of_a_batch(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.txt").write_text(LINE)
    (tmp_path / "list.txt").write_text("person.txt\n")
    arguments = ["--schema", "person.json", "docs", "--files-from", "list.txt", "--model", NO_MODEL, "--overwrite"]
    assert_usage_error(run(tmp_path, *arguments, "--review", "list.txt"), "that is the path list list.txt")
    assert_usage_error(run(tmp_path, *arguments, "--review", "docs/b.txt"), "that is the input document docs/b.txt")
    assert (tmp_path / "docs" / "b.txt").read_text() == LINE


def test_the_review_page_is_not_a_result_of_the_run(tmp_path: Path, schema: Path) -> None:
    result = run(tmp_path, "--schema", "person.json", "person.txt", "--output-dir", "out", "--review", "out/person.json")
    assert_usage_error(result, "--review out/person.json is also where a result of this run goes")


def test_an_existing_file_is_replaced_only_with_overwrite(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "page.html").write_text("someone's page")
    result = run(tmp_path, "--schema", "person.json", "person.txt", "--review", "page.html", "--model", NO_MODEL)
    err = assert_usage_error(result, "page.html exists, and this run did not write it")
    assert "--overwrite" in err
    assert (tmp_path / "page.html").read_text() == "someone's page"
    # --overwrite says what to do: the run goes on to the model (missing here, exit 4)
    overwritten = run(
        tmp_path, "--schema", "person.json", "person.txt", "--review", "page.html", "--model", NO_MODEL, "--overwrite"
    )
    assert overwritten.returncode == 4, overwritten.stderr.decode()


@pytest.mark.parametrize(
    ("page", "fragment"),
    [
        ("missing/page.html", "the folder missing does not exist"),
        ("person.txt/page.html", "the folder person.txt does not exist"),
        ("/proc/page.html", "cannot write the review page /proc/page.html"),
        (".", "--review . is a directory"),
    ],
)
def test_a_review_page_that_cannot_be_written_is_refused_up_front(tmp_path: Path, schema: Path, page: str, fragment: str) -> None:
    result = run(tmp_path, "--schema", "person.json", "person.txt", "--review", page, "--model", NO_MODEL)
    assert_usage_error(result, fragment)


def test_overwrite_needs_something_to_overwrite(tmp_path: Path, schema: Path) -> None:
    result = run(tmp_path, "--schema", "person.json", "person.txt", "--overwrite", "--model", NO_MODEL)
    assert_usage_error(result, "--overwrite applies only with --output-dir or --review")


@pytest.mark.model
def test_the_review_page_shows_failed_documents_and_is_written_when_all_fail(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02 not text")
    result = run(tmp_path, "--schema", "person.json", "empty.txt", "binary.txt", "--review", "page.html", "-q")
    assert result.returncode == 5, result.stderr.decode()
    page = (tmp_path / "page.html").read_text()
    assert "2 documents" in page and "2 failed" in page
    assert "empty.txt" in page and "binary.txt" in page and "DocumentError" in page


@pytest.mark.model
def test_a_single_document_that_fails_is_on_its_review_page(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    result = run(tmp_path, "--schema", "person.json", "empty.txt", "--review", "page.html")
    assert result.returncode == 5 and result.stdout == b"", result.stderr.decode()
    page = (tmp_path / "page.html").read_text()
    assert "1 document" in page and "1 failed" in page and "empty.txt" in page


@pytest.mark.model
def test_the_review_page_of_a_batch_lists_successes_and_failures(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    result = run(tmp_path, "--schema", "person.json", "person.txt", "empty.txt", "--review", "page.html", "-q")
    assert result.returncode == 5, result.stderr.decode()
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [sorted(line) for line in lines] == [["data", "source"], ["error", "source"]]
    page = (tmp_path / "page.html").read_text()
    assert "2 documents" in page and "1 failed" in page


# --skip-existing reads only regular files of bounded size


def _skip_existing_run(tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    return run(tmp_path, "--schema", "person.json", "person.txt", "--output-dir", "out", "--skip-existing", "--model", NO_MODEL)


def test_skip_existing_does_not_wait_on_a_fifo(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "person.json")
    result = _skip_existing_run(tmp_path)  # before the fix this waited for a writer that never came
    err = result.stderr.decode()
    assert "out/person.json is not a regular file: extracting person.txt again" in err, err
    assert result.returncode == 4 and "Traceback" not in err  # it went on to the (missing) model


def test_skip_existing_does_not_read_a_device_without_end(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "person.json").symlink_to("/dev/zero")
    result = _skip_existing_run(tmp_path)
    err = result.stderr.decode()
    assert "out/person.json is not a regular file: extracting person.txt again" in err, err
    assert result.returncode == 4 and "Traceback" not in err


def test_skip_existing_reads_no_more_than_a_result_can_hold(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "out").mkdir()
    with (tmp_path / "out" / "person.json").open("wb") as big:
        big.truncate(65 * 1024 * 1024)  # sparse: no disk used
    result = _skip_existing_run(tmp_path)
    err = result.stderr.decode()
    assert "out/person.json is larger than 67108864 bytes, more than a result holds: extracting person.txt again" in err, err
    assert result.returncode == 4


# The last line of defence: an exception nobody foresaw


FAIL_SCHEMA_LOAD = """
import gguf_extract.cli.commands.extract as extract
def broken(*args, **kwargs):
    raise RuntimeError("a bug in loading")
extract.load_schema = broken
"""


def test_an_unforeseen_error_is_one_line_and_exit_70(tmp_path: Path, schema: Path) -> None:
    result = run_patched(tmp_path, FAIL_SCHEMA_LOAD, "--schema", "person.json", "person.txt", "--model", NO_MODEL)
    err = result.stderr.decode()
    assert result.returncode == 70, err
    assert result.stdout == b""
    assert "Traceback" not in err
    assert err.splitlines()[0] == "error: internal error: RuntimeError: a bug in loading"
    assert "--debug shows the traceback" in err


def test_debug_shows_the_traceback_of_an_unforeseen_error(tmp_path: Path, schema: Path) -> None:
    result = run_patched(tmp_path, FAIL_SCHEMA_LOAD, "--schema", "person.json", "person.txt", "--model", NO_MODEL, "--debug")
    err = result.stderr.decode()
    assert result.returncode == 70
    assert "Traceback" in err and "RuntimeError: a bug in loading" in err


FAIL_ONE_TEXT = """
import gguf_extract.cli.commands.text as text
original = text.read_text
def flaky(where, *args, **kwargs):
    if str(where).endswith("b.txt"):
        raise RecursionError("maximum recursion depth exceeded")
    return original(where, *args, **kwargs)
text.read_text = flaky
"""


def test_extract_text_goes_on_past_an_unforeseen_error(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(f"document {name}\n")
    result = run_patched(tmp_path, FAIL_ONE_TEXT, "text", "a.txt", "b.txt", "c.txt")
    err = result.stderr.decode()
    assert result.returncode == 70, err
    assert "error: internal error: RecursionError: maximum recursion depth exceeded" in err and "Traceback" not in err
    assert result.stdout.decode() == "==> a.txt <==\ndocument a\n\n==> c.txt <==\ndocument c\n"


FAIL_ONE_DOCUMENT = """
import gguf_extract.cli.batch.in_process as in_process
original = in_process.read_for
def flaky(request, extractor, path):
    if str(path).endswith("b.txt"):
        raise RecursionError("maximum recursion depth exceeded")
    return original(request, extractor, path)
in_process.read_for = flaky
"""


@pytest.mark.model
def test_a_batch_goes_on_past_an_unforeseen_error(tmp_path: Path, schema: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(LINE)
    result = run_patched(tmp_path, FAIL_ONE_DOCUMENT, "--schema", "person.json", "a.txt", "b.txt", "c.txt", "--max-tokens", "40")
    err = result.stderr.decode()
    assert result.returncode == 70, err
    assert "Traceback" not in err
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [line["source"] for line in lines] == ["a.txt", "b.txt", "c.txt"]
    assert "data" in lines[0] and "data" in lines[2]
    assert lines[1]["error"] == {
        "type": "InternalError",
        "message": "internal error: RecursionError: maximum recursion depth exceeded",
    }
    assert "3 documents: 2 extracted, 1 failed" in err


# A reader that leaves


def run_into_closed_pipe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """The command writing into a pipe whose reader has already gone, as `| head -0` would leave it."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return run(tmp_path, *args, stdout=writer)
    finally:
        os.close(writer)


def test_extract_text_ends_quietly_when_the_reader_leaves(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(f"document {name}\n")
    result = run_into_closed_pipe(tmp_path, "text", "a.txt", "b.txt")
    assert result.returncode == 141
    assert result.stderr == b""


@pytest.mark.model
def test_a_batch_stops_quietly_when_the_reader_leaves(tmp_path: Path, schema: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(LINE)
    result = run_into_closed_pipe(tmp_path, "--schema", "person.json", "a.txt", "b.txt", "c.txt")
    assert result.returncode == 141
    assert result.stderr == b""  # no message, and no summary: the batch stopped at the first line


def test_a_stdout_that_fails_otherwise_is_still_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("document a\n")
    with open("/dev/full", "wb") as full:
        result = run(tmp_path, "text", "a.txt", stdout=full.fileno())
    assert result.returncode == 7
    assert "cannot write to stdout: No space left on device" in result.stderr.decode()


# Workers and cores


def test_workers_beyond_the_cores_are_named_once(tmp_path: Path, schema: Path) -> None:
    cores = os.cpu_count() or 1
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(LINE)
    result = run(
        tmp_path, "--schema", "person.json", "a.txt", "b.txt", "--workers", "2", "--threads", str(cores), "--model", NO_MODEL
    )
    err = result.stderr.decode()
    assert err.count("warning: --workers 2 run") == 1, err
    assert f"{2 * cores} in all, on {cores} core" in err and "they will wait for each other's cores" in err


def test_the_review_page_never_replaces_the_model_file(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "model.gguf").write_bytes(b"GGUF not really")
    result = run(
        tmp_path, "--schema", "person.json", "person.txt", "--review", "model.gguf", "--model", "model.gguf", "--overwrite"
    )
    assert_usage_error(result, "refusing to write the review page to model.gguf: that is the model file model.gguf")
    assert (tmp_path / "model.gguf").read_bytes() == b"GGUF not really"
