"""Files written so that a killed run never leaves half of one behind."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path

from ._validate import MAX_DATA_BYTES, MAX_DEPTH, check_structure, read_bytes, read_text, rounding_problem
from .errors import InvalidInputError

__all__ = ["atomic_write", "atomic_write_text", "read_yaml", "own_json", "writing_folder", "INCOMPLETE_MARKER"]

#: The file a folder-writing command leaves in its folder while it runs (removed when it completes).
INCOMPLETE_MARKER = ".incomplete"


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` for a temporary file beside ``path``, then move it into place.

    The move is atomic on POSIX file systems: readers, and a resumed run, see either the old
    file or the new one, never a partial write.
    """
    shown = path = Path(path)
    try:
        if path.is_symlink():           # write the file the link points to; the link stays a link
            path = Path(os.path.realpath(path))
    except OSError:                     # a name too long: the write below names it
        pass
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    try:
        write(tmp)
        tmp.replace(path)
    except OSError as exc:       # name the user's path, not the temporary one
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise InvalidInputError(f"cannot write {str(shown)!r}: {exc.strerror or exc}") from None
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise
    return shown


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_write`)."""
    return atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


@contextlib.contextmanager
def writing_folder(folder: str | Path, command: str):
    """Mark ``folder`` incomplete while the block runs: a ``.incomplete`` file naming ``command`` is written
    first and removed only when the block finishes without an exception, so an interrupted or failed run
    leaves a folder that says so (and its files, each written atomically, are whole)."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(f"cannot create the folder {str(folder)!r}: {exc.strerror or exc}") from None
    marker = folder / INCOMPLETE_MARKER
    atomic_write_text(marker, f"{command} started writing here and has not finished; the files in this folder "
                              "may be a mix of this run and an earlier one. Rerun the command.\n")
    yield folder
    marker.unlink(missing_ok=True)


class _DuplicateYamlKey(ValueError):
    pass


class _BadYamlNumber(ValueError):
    pass


#: OmegaConf's YAML floats (omegaconf/_utils.py ``get_yaml_loader``): YAML 1.1's, and ``1e-3`` without a dot.
_OMEGACONF_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X)


def _unique_key_loader(omegaconf_floats: bool = False):
    """PyYAML's SafeLoader, refusing a key given twice in one mapping (it keeps the last silently); a merge key
    (``<<: *anchor`` or ``<<: [*a, *b]``) merges as YAML says: the mapping's own keys win over merged ones. With
    ``omegaconf_floats``, numbers are read as OmegaConf (Hydra, verl) reads them: ``1e-3`` is a float."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # '<<: *anchor': SafeLoader merges it below
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    dup = key in seen
                except TypeError:                      # an unhashable key: SafeLoader's own error follows
                    break
                if dup and key != "<<":
                    raise _DuplicateYamlKey(key, key_node.start_mark.line + 1)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def flatten_mapping(self, node):
            """YAML's merge: the mapping's own keys win, then the merged mappings' in their order (PyYAML 6.0.4 tells
            keys apart by ``id()``, so ``<<: [*a, *b]`` could take a long key from ``b`` instead of ``a``)."""
            own, merged = [], []
            for key_node, value_node in node.value:
                if key_node.tag != "tag:yaml.org,2002:merge":
                    own.append((key_node, value_node))
                    continue
                for sub in value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]:
                    if not isinstance(sub, yaml.MappingNode):
                        raise yaml.constructor.ConstructorError(None, None, f"'<<' merges mappings, found {sub.id}",
                                                                sub.start_mark)
                    self.flatten_mapping(sub)
                    merged += sub.value
            seen = {(k.tag, k.value) for k, _ in own if isinstance(k, yaml.ScalarNode)}
            first = []
            for k, v in merged:                       # the first mapping giving a key wins
                key = (k.tag, k.value) if isinstance(k, yaml.ScalarNode) else id(k)
                if key not in seen:
                    seen.add(key)
                    first.append((k, v))
            node.value = first + own

        def construct_yaml_float(self, node):
            value = super().construct_yaml_float(node)
            why = rounding_problem(str(node.value).replace("_", ""), value)
            if why:
                raise _BadYamlNumber(node.value, why, node.start_mark.line + 1)
            return value

    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", UniqueKeyLoader.construct_yaml_float)
    if omegaconf_floats:
        UniqueKeyLoader.add_implicit_resolver("tag:yaml.org,2002:float", _OMEGACONF_FLOAT, list("-+0123456789."))
    return UniqueKeyLoader


def read_yaml(path: str | Path, what: str, expected: str, *, omegaconf_floats: bool = False):
    """``path`` parsed as YAML; a missing file or bad YAML is an InvalidInputError naming ``what``. With
    ``omegaconf_floats``, ``1e-3`` is a float, as OmegaConf reads it (Hydra's configs: verl)."""
    import yaml

    text = read_text(path, what, expected=expected)
    try:
        data = yaml.load(text, Loader=_unique_key_loader(omegaconf_floats))
    except _DuplicateYamlKey as exc:
        raise InvalidInputError(f"{what} {str(path)!r}: the key {exc.args[0]!r} appears twice in one mapping "
                                f"(line {exc.args[1]}); YAML would keep the last silently") from None
    except _BadYamlNumber as exc:
        raise InvalidInputError(f"{what} {str(path)!r} line {exc.args[2]}: the number {str(exc.args[0])[:40]} "
                                f"{exc.args[1]}") from None
    except yaml.YAMLError as exc:
        why = " ".join(str(exc).split()).replace('in "<unicode string>", ', "at ")  # the file is named already
        raise InvalidInputError(f"{what} {str(path)!r} is not valid YAML: {why}") from None
    except RecursionError:
        raise InvalidInputError(f"{what} {str(path)!r} is nested too deeply to parse (expected a few levels; the "
                                f"limit is {MAX_DEPTH})") from None
    return check_structure(data, f"{what} {str(path)!r}")


def own_json(path: str | Path):
    """The JSON in a file a command writes for itself (figures' record of finished figures, its fingerprints), or
    None when it is missing, unreadable, not JSON, or not a regular file (a FIFO there would block a plain read)."""
    import json

    try:
        return json.loads(read_bytes(path, "record", max_bytes=MAX_DATA_BYTES))
    except (ValueError, RecursionError):            # InvalidInputError (missing, a FIFO, a folder) is a ValueError
        return None
