"""The table of what each jax release needs: lookups, refusals, and reading the target."""

from __future__ import annotations

import pytest

from jaxmap.errors import TargetError
from jaxmap.knowledge import versions
from jaxmap.knowledge.versions import OLDEST, STEPS, Release, UnsupportedRelease


def _at(text):
    return versions.release(text)


@pytest.mark.parametrize("text, feature, value", [
    ("0.4.30", "batching_registry", "primitive_batchers"),
    ("0.4.35", "batching_registry", "primitive_batchers"),
    ("0.4.36", "batching_registry", "fancy_primitive_batchers"),
    ("0.12.0.1", "batching_registry", "fancy_primitive_batchers"),
    ("0.6.0", "shard_map_module", "jax.experimental.shard_map"),
    ("0.6.1", "shard_map_module", "jax"),
    ("0.5.3", "shard_map_replication", ("jax.experimental.shard_map",
                                        ("register_standard_check",
                                         "register_standard_rewrite"))),
    ("0.6.0", "shard_map_replication", None),
    ("0.5.3", "shard_map_grad_argument", None),
    ("0.6.0", "shard_map_grad_argument", "check_rep=False"),
    ("0.6.1", "shard_map_grad_argument", None),
    ("0.5.3", "hijax_base", None),
    ("0.9.0", "hijax_base", "VJPHiPrimitive"),
    ("0.11.1", "hijax_base", "VJPHiPrimitive"),
    ("0.11.2", "hijax_base", "HiPrim"),
    ("0.5.3", "export_undeclared_import", "absl"),
    ("0.6.2", "export_undeclared_import", None),
    ("0.4.38", "test_cpu_devices", "set_host_platform_device_count"),
    ("0.5.0", "test_cpu_devices", "request_cpu_devices"),
    ("0.10.0", "aval_to_ir_type_args", "aval"),
    ("0.10.1", "aval_to_ir_type_args", "ctx.module_context, aval"),
    ("0.9.1", "hijax_accum_check", None),
    ("0.11.0", "hijax_accum_check", "isinstance({}, GradAccum)"),
])
def test_a_release_gets_its_last_step(text, feature, value):
    assert _at(text).get(feature) == value


def test_every_feature_has_a_value_from_the_oldest_release_in_order():
    for feature, steps in STEPS.items():
        firsts = [first for first, _ in steps]
        assert firsts[0] == OLDEST and firsts == sorted(set(firsts)), feature


def test_needs_has_every_feature():
    assert set(_at("0.10.2").needs()) == set(STEPS)


@pytest.mark.parametrize("text, fragment", [
    ("0.5.3", "--style hijax needs jax 0.9.0 or newer; the target is jax 0.5.3"),
    ("0.8.3", "--style hijax needs jax 0.9.0 or newer; the target is jax 0.8.3"),
])
def test_require_names_the_first_release(text, fragment):
    with pytest.raises(UnsupportedRelease) as error:
        _at(text).require("hijax_base", "--style hijax")
    assert str(error.value) == fragment


def test_require_names_the_release_that_dropped_a_feature(monkeypatch):
    monkeypatch.setitem(STEPS, "gone", ((OLDEST, "x"), ((0, 11, 0), None)))
    with pytest.raises(UnsupportedRelease, match="needs a jax older than 0.11.0"):
        _at("0.12.0").require("gone", "it")
    assert _at("0.10.2").require("gone", "it") == "x"


def test_require_returns_the_value():
    assert _at("0.12.0.1").require("hijax_base", "--style hijax") == "HiPrim"


@pytest.mark.parametrize("text, version", [
    ("0.12.0.1", (0, 12, 0, 1)), ("0.11.1.dev20260101", (0, 11, 1)), (" 0.4.30\n", (0, 4, 30)),
])
def test_parse(text, version):
    assert versions.parse(text) == version


@pytest.mark.parametrize("text, error", [("0.4.29", UnsupportedRelease),
                                         ("dev", TargetError)])
def test_release_refuses_what_it_cannot_target(text, error):
    with pytest.raises(error) as raised:
        versions.release(text)
    assert "\n" not in str(raised.value)


def test_installed_reads_the_distribution_metadata():
    from importlib import metadata

    assert versions.installed() == Release(versions.parse(metadata.version("jax")),
                                           metadata.version("jax"))


def _checkout(root, text):
    (root / "jax").mkdir(parents=True)
    (root / "jax" / "version.py").write_text(text)
    return str(root)


def test_installed_without_metadata_reads_the_importable_jaxs_version_py(tmp_path,
                                                                        monkeypatch):
    """A jax source tree on PYTHONPATH has no distribution metadata (an accelerator
    host's scrubbed jax): its version.py says the release."""
    import sys
    from importlib import metadata

    def no_metadata(name):
        raise metadata.PackageNotFoundError(name)

    root = _checkout(tmp_path, '_version = "0.9.2"\n')
    (tmp_path / "jax" / "__init__.py").write_text("")
    monkeypatch.setattr(metadata, "version", no_metadata)
    monkeypatch.syspath_prepend(root)
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    assert versions.installed() == Release((0, 9, 2), "0.9.2")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != root and "-packages" not in p])
    with pytest.raises(TargetError, match="jax is not installed"):
        versions.installed()


def test_of_checkout_reads_version_py_statically(tmp_path):
    root = _checkout(tmp_path, 'import os\n_version = "0.11.1"\nraise SystemExit\n')
    assert versions.target(root) == Release((0, 11, 1), "0.11.1")


@pytest.mark.parametrize("text", ["_version = compute()\n", "def (:\n"])
def test_of_checkout_without_a_literal_version(tmp_path, text):
    with pytest.raises(TargetError) as error:
        versions.of_checkout(_checkout(tmp_path, text))
    assert "\n" not in str(error.value)


def test_of_checkout_without_version_py(tmp_path):
    with pytest.raises(TargetError, match="not a JAX checkout"):
        versions.of_checkout(str(tmp_path))
