"""--model by name: GGUF files found in other tools' local model folders (core.model_files),
on folders laid out as llama.cpp, LM Studio and the Hugging Face hub cache lay them out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gguf_extract.core.errors import ModelError, ModelNotFound
from gguf_extract.core.model import bundled_model_path
from gguf_extract.core.model_files import cached_models, model_folders, resolve_model

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home folder, with no cache folder named by the environment."""
    for name in ("LLAMA_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def gguf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF" + bytes(12))
    return path


def hub_file(hub: Path, repository: str, name: str) -> Path:
    """A file of a Hugging Face hub cache: a link in a snapshot to a blob, as huggingface_hub writes it."""
    folder = hub / f"models--{repository.replace('/', '--')}"
    blob = gguf(folder / "blobs" / f"{abs(hash(name)):x}")
    link = folder / "snapshots" / "0123abcd" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(blob)
    return link


def home_with_bundled_model(home: Path, repository: str, name: str) -> dict[str, str]:
    """The environment of a user whose Hugging Face hub cache (under `home`) holds the bundled
    model as `repository`'s file `name`, and no other model folder is named by a variable."""
    link = home / ".cache" / "huggingface" / "hub" / f"models--{repository.replace('/', '--')}" / "snapshots" / "0123abcd" / name
    link.parent.mkdir(parents=True)
    link.symlink_to(bundled_model_path())
    named = ("LLAMA_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")
    return {key: value for key, value in os.environ.items() if key not in named} | {"HOME": str(home)}


def test_a_name_finds_the_one_cached_model_holding_it_in_a_hugging_face_cache(home: Path) -> None:
    hub = home / ".cache" / "huggingface" / "hub"
    wanted = hub_file(hub, "bartowski/Qwen2.5-1.5B-Instruct-GGUF", "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf")
    hub_file(hub, "bartowski/Qwen2.5-1.5B-Instruct-GGUF", "mmproj-Qwen2.5-1.5B-f16.gguf")  # a projector, no model
    hub_file(hub, "someone/Big-GGUF", "big-q4-00001-of-00002.gguf")
    hub_file(hub, "someone/Big-GGUF", "big-q4-00002-of-00002.gguf")  # a later part of a split model
    assert resolve_model("qwen2.5-1.5b") == wanted
    assert resolve_model("bartowski/qwen") == wanted  # no file here: a name, slashes and all
    names = [name for name, _ in cached_models()]
    assert names == [
        "bartowski/Qwen2.5-1.5B-Instruct-GGUF/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf",
        "someone/Big-GGUF/big-q4-00001-of-00002.gguf",
    ]


def test_datasets_are_not_searched_and_one_file_linked_twice_is_one_match(home: Path) -> None:
    hub = home / ".cache" / "huggingface" / "hub"
    dataset = gguf(hub / "datasets--org--corpus" / "snapshots" / "1" / "corpus-model.gguf")
    first = hub_file(hub, "org/Two-GGUF", "two-q4.gguf")
    second = first.parent.parent / "4567cdef" / "two-q4.gguf"
    second.parent.mkdir()
    second.symlink_to(first.resolve())  # a second revision holding the same blob
    assert dataset not in [path for _, path in cached_models()]
    assert resolve_model("two-q4") in (first, second)
    with pytest.raises(ModelNotFound):
        resolve_model("corpus-model")


def test_llama_cpp_and_lm_studio_folders_are_searched_and_the_environment_names_them(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llama = gguf(home / ".cache" / "llama.cpp" / "ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M.gguf")
    studio = gguf(home / ".lmstudio" / "models" / "lmstudio-community" / "Phi-4-mini-GGUF" / "Phi-4-mini-Q4_K_M.gguf")
    assert resolve_model("gemma-3-1b") == llama
    assert resolve_model("PHI-4") == studio  # case is ignored
    monkeypatch.setenv("LLAMA_CACHE", str(home / "elsewhere"))
    moved = gguf(home / "elsewhere" / "tiny.gguf")
    assert model_folders()[0] == home / "elsewhere"
    assert resolve_model("tiny") == moved
    monkeypatch.setenv("HUGGINGFACE_HUB_CACHE", str(home / "old-hub"))  # huggingface_hub's older name
    assert model_folders()[-1] == home / "old-hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    assert model_folders()[-1] == home / "hub"


def test_an_exact_file_name_wins_over_names_that_only_hold_it(home: Path) -> None:
    folder = home / ".lmstudio" / "models" / "org" / "Model-GGUF"
    exact = gguf(folder / "model-q4_k_m.gguf")
    gguf(folder / "model-q4_k_m-imat.gguf")
    assert resolve_model("model-q4_k_m") == exact
    assert resolve_model("model-q4_k_m.gguf") == exact


def test_several_matches_are_refused_naming_each(home: Path) -> None:
    folder = home / ".lmstudio" / "models" / "org"
    first, second = gguf(folder / "a" / "llama-3-q4.gguf"), gguf(folder / "b" / "llama-3-q8.gguf")
    with pytest.raises(ModelError) as refused:
        resolve_model("llama-3")
    assert "matches 2 GGUF files" in refused.value.message
    assert str(first) in refused.value.message and str(second) in refused.value.message
    assert "longer part of its name" in refused.value.hint


def test_no_match_names_the_folders_searched_and_the_models_they_hold(home: Path) -> None:
    with pytest.raises(ModelNotFound) as nothing:
        resolve_model("qwen")
    assert str(home / ".cache" / "llama.cpp") in nothing.value.message and "no GGUF model" in nothing.value.message
    gguf(home / ".cache" / "llama.cpp" / "org_repo_phi.gguf")
    with pytest.raises(ModelNotFound) as other:
        resolve_model("qwen")
    assert "org_repo_phi.gguf" in other.value.message and other.value.searched is not None


def test_a_path_or_a_file_here_is_never_looked_up(home: Path) -> None:
    gguf(home / ".cache" / "llama.cpp" / "model.gguf")
    here = gguf(home / "model.gguf")
    assert resolve_model("model.gguf") == Path("model.gguf") and Path("model.gguf").resolve() == here.resolve()
    assert resolve_model("missing/../model.gguf") == Path("missing/../model.gguf")  # ModelNotFound when opened
    assert resolve_model("/elsewhere/model.gguf") == Path("/elsewhere/model.gguf")
    assert resolve_model("./absent.gguf") == Path("absent.gguf")
    cached = gguf(home / ".cache" / "llama.cpp" / "absent.gguf")
    assert resolve_model("absent") == cached
    assert resolve_model(Path("absent.gguf")) == Path("absent.gguf")  # a caller's Path is never a name


def test_a_folder_that_links_to_itself_is_walked_once(home: Path) -> None:
    folder = home / ".cache" / "llama.cpp"
    wanted = gguf(folder / "deep" / "one.gguf")
    (folder / "deep" / "again").symlink_to(folder, target_is_directory=True)
    assert resolve_model("one") == wanted
    assert len(cached_models()) == 1


def test_the_command_opens_a_model_by_name_and_names_the_folders_when_none_matches(tmp_path: Path) -> None:
    repository = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"
    environment = home_with_bundled_model(tmp_path / "home", repository, "SmolLM2-135M-Instruct.Q4_1.gguf")
    environment |= {"EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(ROOT / "samples" / "person.txt"), "--max-tokens", "60"]
    found = subprocess.run([*command, "--model", "smollm2-135m"], capture_output=True, env=environment, timeout=600, check=False)
    assert found.returncode == 0, found.stderr.decode()
    schema = json.loads((ROOT / "schemas" / "person.json").read_text())
    jsonschema.validate(json.loads(found.stdout), schema)
    missing = subprocess.run([*command, "--model", "qwen"], capture_output=True, env=environment, timeout=600, check=False)
    assert missing.returncode == 4 and missing.stdout == b""
    stderr = missing.stderr.decode()
    assert "model not found" in stderr and "huggingface" in stderr and "SmolLM2-135M-Instruct.Q4_1.gguf" in stderr


def test_extract_models_lists_each_cached_model_by_the_name_model_takes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hub_file(home / ".cache" / "huggingface" / "hub", "org/Tiny-GGUF", "tiny-q4.gguf")
    studio = gguf(home / ".lmstudio" / "models" / "pub" / "Small-GGUF" / "small-q8.gguf")
    named = ("LLAMA_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")
    environment = {key: value for key, value in os.environ.items() if key not in named} | {"HOME": str(home)}
    command = [sys.executable, "-m", "gguf_extract", "models"]
    listed = subprocess.run(command, capture_output=True, env=environment, timeout=120, check=False)
    assert listed.returncode == 0 and listed.stderr == b""
    lines = [line.split("\t") for line in listed.stdout.decode().splitlines()]
    assert [name for name, _ in lines] == ["small-q8", "tiny-q4"]
    assert lines[0][1] == str(studio) and lines[1][1].endswith("snapshots/0123abcd/tiny-q4.gguf")
    again = gguf(home / ".cache" / "llama.cpp" / "TINY-Q4.gguf")  # a second file of that name: a path is its name
    (home / ".cache" / "llama.cpp" / "link-q8.gguf").symlink_to(studio)  # the same file twice: one line
    foo = gguf(home / ".cache" / "lm-studio" / "models" / "foo.gguf")
    (home / ".cache" / "lm-studio" / "models" / "bar.gguf").symlink_to(foo)  # foo, also named bar...
    gguf(home / ".cache" / "lm-studio" / "models" / "pub" / "foo.gguf")  # ...and another foo: bar is its name
    listed = subprocess.run(command, capture_output=True, env=environment, timeout=120, check=False)
    lines = [line.split("\t") for line in listed.stdout.decode().splitlines()]
    assert listed.returncode == 0 and len(lines) == 5 and len({os.path.realpath(file) for _, file in lines}) == 5
    folders = [home / ".cache" / "llama.cpp", home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    folders.append(home / ".cache" / "huggingface" / "hub")
    for name, file in lines:  # every name listed opens its file
        assert os.path.realpath(resolve_model(name, folders)) == os.path.realpath(file), name
    names = [name for name, _ in lines]
    assert str(again) in names and "bar" in names and "foo" not in names
    empty = {**environment, "HOME": str(tmp_path / "nobody")}
    nothing = subprocess.run(command, capture_output=True, env=empty, timeout=120, check=False)
    assert nothing.returncode == 0 and nothing.stdout == b""
    assert "no GGUF model in the local model folders" in nothing.stderr.decode()


def test_a_model_named_is_kept_from_results_like_a_model_given_by_path(tmp_path: Path) -> None:
    """The file a name resolves to is the model file: a review page is never written over it."""
    model = gguf(tmp_path / "home" / ".cache" / "llama.cpp" / "tiny.gguf")
    named = ("LLAMA_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")
    environment = {key: value for key, value in os.environ.items() if key not in named} | {"HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(ROOT / "samples" / "person.txt")]
    options = ["--model", "tiny", "--review", str(model), "--overwrite"]
    run = subprocess.run([*command, *options], capture_output=True, env=environment, timeout=120, check=False)
    assert run.returncode == 2 and run.stdout == b""
    assert f"that is the model file {model}" in run.stderr.decode()
    assert model.read_bytes() == b"GGUF" + bytes(12)


def test_a_folder_of_more_entries_than_the_walk_reads_is_read_only_that_far(home: Path) -> None:
    folder = home / ".cache" / "llama.cpp"
    folder.mkdir(parents=True)
    for number in range(25_000):
        (folder / f"m{number}.gguf").touch()
    found = cached_models([folder])
    assert 0 < len(found) < 25_000


def fillers(folder: Path, count: int) -> None:
    """`count` empty files in `folder`, none of them a model."""
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        (folder / f"f{number}.bin").touch()


def test_a_search_cut_short_says_so_and_takes_no_match_for_the_only_one(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gguf_extract.core.model_files._MOST_ENTRIES", 50)
    folder = home / ".cache" / "llama.cpp"
    seen = gguf(folder / "a" / "qwen-j.gguf")  # folders are walked in order: a, then b...
    fillers(folder / "b", 60)  # ...which holds more than the walk reads...
    unseen = gguf(folder / "c" / "qwen-b.gguf")  # ...so that c is never reached
    found = cached_models([folder])
    assert [path for _, path in found] == [seen] and found.cut == (folder,)
    assert "stopped at 50 entries" in found.cut_short()
    with pytest.raises(ModelError) as cut:
        resolve_model("qwen", [folder])
    assert not isinstance(cut.value, ModelNotFound)
    assert str(seen) in cut.value.message and "stopped at 50 entries" in cut.value.message
    assert "its path" in cut.value.hint and "full name" in cut.value.hint
    with pytest.raises(ModelNotFound) as missed:
        resolve_model("qwen-b", [folder])
    assert "stopped at 50 entries" in missed.value.message
    assert resolve_model("a/qwen-j", [folder]) == seen  # a full name is looked at, not searched for
    assert resolve_model("c/qwen-b.gguf", [folder]) == unseen
    assert resolve_model(str(unseen), [folder]) == unseen


def test_a_folder_of_exactly_as_many_entries_as_the_walk_reads_is_read_whole(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gguf_extract.core.model_files._MOST_ENTRIES", 50)
    folder = home / ".cache" / "llama.cpp"
    fillers(folder / "fill", 47)  # with two folders and the model: 50 entries
    model = gguf(folder / "m" / "one.gguf")
    assert cached_models([folder]).cut == () and resolve_model("one", [folder]) == model
    (folder / "fill" / "more.bin").touch()
    assert cached_models([folder]).cut == (folder,)
    with pytest.raises(ModelError, match="stopped at 50 entries"):
        resolve_model("one", [folder])
    assert resolve_model("m/one", [folder]) == model  # its full name


def test_the_command_says_when_a_search_was_cut_short(tmp_path: Path) -> None:
    """The bound itself (20,000 entries), through the command: the listing says it is
    incomplete, and --model refuses a name matched in it."""
    cache = tmp_path / "llama.cpp"
    seen = gguf(cache / "a" / "qwen-j.gguf")
    fillers(cache / "b", 20_001)
    gguf(cache / "c" / "qwen-b.gguf")
    named = ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")
    environment = {key: value for key, value in os.environ.items() if key not in named}
    environment |= {"HOME": str(tmp_path / "home"), "LLAMA_CACHE": str(cache)}
    listed = subprocess.run([sys.executable, "-m", "gguf_extract", "models"], capture_output=True, env=environment, timeout=120)
    assert listed.returncode == 0
    assert listed.stdout.decode() == f"{seen}\t{seen}\n"  # by its path: a name could match files not seen
    cut = f"the search of {cache} stopped at 20,000 entries"
    assert listed.stderr.decode() == f"warning: the list is incomplete: {cut}; each model found is listed by its path\n"
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(ROOT / "samples" / "person.txt"), "--model", "qwen"]
    refused = subprocess.run(command, capture_output=True, env=environment | {"NO_COLOR": "1"}, timeout=120)
    assert refused.returncode == 4 and refused.stdout == b""
    stderr = refused.stderr.decode()
    assert f"matches one GGUF file, {seen}, but the search of {cache} stopped at 20,000 entries" in stderr
    assert "hint: name it by its path, or by its full name" in stderr


def test_a_name_with_slashes_that_is_no_file_here_is_looked_up(home: Path) -> None:
    hub = home / ".cache" / "huggingface" / "hub"
    tiny = hub_file(hub, "acme/tiny-GGUF", "tiny-q4.gguf")
    studio = gguf(home / ".lmstudio" / "models" / "pub" / "Small-GGUF" / "small-q8.gguf")
    llama = gguf(home / ".cache" / "llama.cpp" / "ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M.gguf")
    assert resolve_model("acme/tiny-GGUF") == tiny  # a Hugging Face repository, as `org/repo`
    gguf(tiny.parent / "tiny-q4-imat.gguf")
    assert resolve_model("acme/tiny-gguf/tiny-q4") == tiny  # a full name, case ignored, as for any name
    assert resolve_model("acme/tiny-GGUF/tiny-q4.gguf") == tiny  # the name the not-found error lists
    assert resolve_model("pub/Small-GGUF") == studio  # LM Studio's org/repo folders
    assert resolve_model("ggml-org/gemma-3-1b-it-GGUF") == llama  # llama.cpp's cache writes it org_repo_file
    with pytest.raises(ModelNotFound) as missing:
        resolve_model("acme/other-GGUF")
    assert "no file acme/other-GGUF here" in missing.value.message and "acme/tiny-GGUF/tiny-q4.gguf" in missing.value.message
    here = gguf(home / "acme" / "tiny-GGUF")  # a file of that name here is the file
    assert resolve_model("acme/tiny-GGUF") == Path("acme/tiny-GGUF") and Path("acme/tiny-GGUF").resolve() == here.resolve()


def test_the_command_opens_an_org_repo_name(tmp_path: Path) -> None:
    environment = home_with_bundled_model(tmp_path / "home", "acme/tiny-GGUF", "tiny-q4.gguf")
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(ROOT / "samples" / "person.txt"), "--max-tokens", "60"]
    found = subprocess.run([*command, "--model", "acme/tiny-GGUF"], capture_output=True, env=environment, timeout=600)
    assert found.returncode == 0, found.stderr.decode()
    assert b"error" not in found.stderr
    jsonschema.validate(json.loads(found.stdout), json.loads((ROOT / "schemas" / "person.json").read_text()))


def test_a_name_found_nowhere_is_told_what_to_do_without_a_list_that_was_never_shown(tmp_path: Path) -> None:
    named = ("LLAMA_CACHE", "HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "EXTRACT_MODEL")
    environment = {key: value for key, value in os.environ.items() if key not in named} | {"HOME": str(tmp_path / "nobody")}
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(ROOT / "samples" / "person.txt"), "--model", "qwen"]
    result = subprocess.run(command, capture_output=True, env=environment, timeout=120, check=False)
    err = result.stderr.decode()
    assert result.returncode == 4 and result.stdout == b""
    assert "no GGUF model in the local model folders" in err
    assert "models listed" not in err and "no model folder here holds a GGUF file" in err
    gguf(tmp_path / "nobody" / ".cache" / "llama.cpp" / "tiny.gguf")
    result = subprocess.run(command, capture_output=True, env=environment, timeout=120, check=False)
    assert result.returncode == 4 and "tiny" in result.stderr.decode()
    assert "one of the cached models listed" in result.stderr.decode()


def test_llama_cpp_s_repository_and_quantization_name_its_file(home: Path) -> None:
    hub = home / ".cache" / "huggingface" / "hub"
    small = hub_file(hub, "acme/tiny-GGUF", "tiny-Q4_1.gguf")
    large = hub_file(hub, "acme/tiny-GGUF", "tiny-Q8_0.gguf")
    assert resolve_model("acme/tiny-GGUF:Q4_1") == small
    assert resolve_model("hf.co/acme/tiny-GGUF:q8_0") == large
    with pytest.raises(ModelError, match="matches 2 GGUF files"):
        resolve_model("acme/tiny-GGUF")
    with pytest.raises(ModelNotFound):
        resolve_model("acme/tiny-GGUF:Q2_K")
