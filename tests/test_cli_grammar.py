"""The one command-line grammar (docs/design.md, "Command line"), checked on every sub-command's parser.

New commands pass by building their options with the helpers in ragbench/commands/_common.py:
add_config_options (--config, --set), add_retriever_option (--retriever), add_k_option (-k), add_model_option
(--model), add_output_options (--json, --quiet), add_tracking_option (--no-mlflow; marks an evaluating command)
or add_common_options (config + output + tracking)."""
from __future__ import annotations

import argparse
import json
import re

import pytest

from ragbench.cli import build_parser
from ragbench.commands._common import Output, json_line, load_cfg, parse_sets
from ragbench.errors import ConfigError

#: Commands that evaluate something and log it: each must take --config, --set, --json, --quiet and --no-mlflow.
EVALUATING = {"eval beir", "eval golden", "eval qa", "eerag bench", "eerag tokens", "eerag converse",
              "eerag digest", "dcs threads", "dcs locomo",
              "research", "ask", "tune"}
#: Evaluating commands whose input is not a config (a batch file of notebooks × parameters).
NO_CONFIG = {"batch"}
#: Names that the grammar replaced: option → what to use instead.
RENAMED = {"--mode": "--retriever", "--modes": "--retriever (comma-separated where several are compared)",
           "--retrievers": "--retriever", "--k": "-k", "--top-k": "-k", "--chat-model": "--model",
           "--llm": "--model", "--progress": "progress is on by default; --quiet silences it",
           "--no-progress": "--quiet", "--silent": "--quiet", "--output-json": "--json"}
SHORT_OK = {"-h", "-k", "-v"}
LONG = re.compile(r"^--[a-z0-9]+(-[a-z0-9]+)*$")


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path), parser
        return
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, path + (name,))


LEAVES = dict(_leaves(build_parser()))


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings}


def test_the_known_commands_are_all_there():
    missing = sorted((EVALUATING | NO_CONFIG) - set(LEAVES))
    assert not missing, f"evaluating commands missing from `ragbench --help`: {missing}"


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_option_names_and_help(path):
    parser = LEAVES[path]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        label = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip() and action.help != argparse.SUPPRESS, (
            f"`ragbench {path}`: {label} has no help text. Rule: every option and positional argument has "
            "help=... (one line saying what it does and its default).")
        for s in action.option_strings:
            assert s not in RENAMED, (f"`ragbench {path}`: {s} is not in the grammar; use {RENAMED[s]} "
                                      "(ragbench/commands/_common.py has helpers for each).")
            assert s in SHORT_OK or LONG.match(s), (
                f"`ragbench {path}`: {s} is not a lower-case --kebab-case long option (short options: only "
                f"{sorted(SHORT_OK)}).")
    opts = _options(parser)
    if "--retriever" in opts:
        assert opts["--retriever"].dest == "retriever"
    if "-k" in opts:
        assert opts["-k"].dest == "k" and "--k" not in opts


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_output_and_config_options_come_together(path):
    opts = _options(LEAVES[path])
    if "--json" in opts:
        assert "--quiet" in opts, (f"`ragbench {path}` has --json but no --quiet. Rule: progress is on stderr and "
                                   "only --quiet silences it (use add_output_options).")
    if "--config" in opts or "--set" in opts:
        assert "--config" in opts and "--set" in opts, (
            f"`ragbench {path}`: --config and --set go together (use add_config_options).")
        assert opts["--set"].default == [] and isinstance(opts["--set"], argparse._AppendAction), (
            f"`ragbench {path}`: --set must be repeatable (use add_config_options).")


@pytest.mark.parametrize("path", sorted(EVALUATING | NO_CONFIG))
def test_evaluating_commands_take_config_output_and_tracking_options(path):
    parser = LEAVES[path]
    opts = _options(parser)
    needed = ["--json", "--quiet", "--no-mlflow"] + ([] if path in NO_CONFIG else ["--config", "--set"])
    missing = [o for o in needed if o not in opts]
    assert not missing, (f"`ragbench {path}` is an evaluating command but lacks {missing}. Rule: evaluating "
                         "commands take --config FILE, repeatable --set KEY=VALUE, --json, --quiet and --no-mlflow "
                         "(add_common_options in ragbench/commands/_common.py).")
    assert parser.get_default("evaluating") is True


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_tracked_commands_are_listed(path):
    if LEAVES[path].get_default("evaluating"):
        assert path in EVALUATING | NO_CONFIG, (
            f"`ragbench {path}` logs MLflow runs (add_tracking_option) but is not in EVALUATING of "
            "tests/test_cli_grammar.py: add it there so its grammar is checked.")


def test_set_values_and_errors(tmp_path):
    assert parse_sets(["bm25.k1=1.2", "answer.llm_model=null", "a.b = x=y"]) == {
        "bm25.k1": "1.2", "answer.llm_model": None, "a.b": "x=y"}
    with pytest.raises(ConfigError, match="--set expects key=value"):
        parse_sets(["bm25.k1"])
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text("bm25: {k1: 0.9, b: 0.5}\nretrieval: {mode: dense}\n")
    args = argparse.Namespace(config=str(cfg_file), set=["bm25.k1=1.3", "bm25.stopwords=yes"])
    cfg = load_cfg(args, {"retrieval.mode": "bm25", "retrieval.k": None})
    assert (cfg.bm25.k1, cfg.bm25.b, cfg.bm25.stopwords, cfg.retrieval.mode, cfg.retrieval.k) == (
        1.3, 0.5, True, "bm25", 10)
    with pytest.raises(ConfigError, match="Did you mean 'bm25.k1'"):
        load_cfg(argparse.Namespace(config=None, set=["bm25.k2=1"]))


def test_json_line_is_strict_and_output_routes_the_report(capsys):
    assert json_line({"a": float("nan"), "b": (1, 2.5), "c": {"d": float("inf")}}) == \
        '{"a": null, "b": [1, 2.5], "c": {"d": null}}'
    out = Output(argparse.Namespace(json=True, quiet=False))
    out.text("table")
    out.json({"x": 1})
    captured = capsys.readouterr()
    assert captured.out == '{"x": 1}\n' and captured.err == "table\n"
    quiet = Output(argparse.Namespace(json=True, quiet=True))
    quiet.text("table")
    quiet.json({"x": 2})
    captured = capsys.readouterr()
    assert captured.out == '{"x": 2}\n' and captured.err == ""
    plain = Output(argparse.Namespace(json=False, quiet=True))
    plain.text("a", "b")
    plain.json({"x": 3})
    assert capsys.readouterr().out == "a\nb\n"
    assert json.loads(json_line({"k": 1})) == {"k": 1}
