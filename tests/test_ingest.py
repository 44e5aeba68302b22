"""Ingest: every kind of bad row quarantined row by row, good rows stored, idempotent re-runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_support import Cli, cli_fixture  # noqa: F401  (the `cli` fixture)

from memory import banks, entries
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, EntryIn
from memory.testing import ScriptedCompleter
from memory.transfer.ingest import ingest, stable_id
from memory.transfer.ingest.report import iter_report_lines

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def conv(ctx: Context) -> Bank:
    """An empty conversation bank."""
    return banks.create(ctx, BankCreate(name="support", type="conversation"))


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A writable copy of the ingest fixtures (rejects files are written next to inputs)."""
    target = tmp_path / "in"
    shutil.copytree(FIXTURES, target)
    return target


def rejects_of(path: Path) -> list[dict[str, object]]:
    """Return the rejected rows recorded next to `path`, in order."""
    rejects = path.with_name(path.name + ".rejects.jsonl")
    return [json.loads(line) for line in rejects.read_text("utf-8").splitlines()]


def test_jsonl_bad_rows_are_quarantined_row_by_row(ctx: Context, conv: Bank, inputs: Path) -> None:
    source = inputs / "conversation.jsonl"
    report = ingest(ctx, conv, [source])

    rejected = [(r["line"], r["code"]) for r in rejects_of(source)]
    assert rejected == [
        (3, "bad_json"),
        (4, "missing_speaker"),
        (5, "wrong_type"),
        (6, "empty_content"),
        (7, "unknown_column"),
        (8, "bad_encoding"),
        (12, "missing_field"),
        (13, "bad_json"),
    ]
    first = rejects_of(source)[0]
    assert first["source"] == str(source)
    assert first["raw"] == '{"key": "c1", "speaker": "ann", "content": "broken'
    assert "tags" in str(rejects_of(source)[2]["reason"])
    assert "'mood'" in str(rejects_of(source)[4]["reason"])
    assert "\\xe9" in str(rejects_of(source)[5]["raw"])
    assert rejects_of(source)[6]["reason"] == (
        "key: required, but this row has no value (column missing or cell empty)"
    )
    (file_report,) = report.files
    assert (file_report.rows, file_report.stored, file_report.rejected) == (12, 4, 8)
    assert file_report.rejects_path == str(source) + ".rejects.jsonl"

    stored = entries.read(ctx, conv)
    assert sorted(e.content for e in stored) == sorted(
        [
            "Hi, my order 1001 has not arrived.",
            "Sorry to hear that, let me check order 1001.",
            "I prefer e-mail over phone calls.",
            "Noted: e-mail it is.",
        ]
    )
    by_content = {e.content: e for e in stored}
    assert by_content["I prefer e-mail over phone calls."].id == "src-42"
    assert by_content["I prefer e-mail over phone calls."].created_at.isoformat() == (
        "2026-10-03T06:00:00+00:00"
    )
    assert by_content["Noted: e-mail it is."].metadata == {"channel": "chat"}
    assert by_content["Hi, my order 1001 has not arrived."].tags == ["order"]


def test_csv_bad_rows_report_line_and_row(ctx: Context, conv: Bank, inputs: Path) -> None:
    source = inputs / "conversation.csv"
    report = ingest(ctx, conv, [source])

    rejected = [(r["line"], r["row"], r["code"]) for r in rejects_of(source)]
    assert rejected == [
        (3, 2, "missing_speaker"),
        (6, 4, "empty_content"),
        (7, 5, "unknown_column"),
        (8, 6, "wrong_type"),
        (9, 7, "bad_encoding"),
    ]
    assert "created_at" in str(rejects_of(source)[3]["reason"])
    assert report.stored == 3
    stored = {e.content: e for e in entries.read(ctx, conv)}
    assert set(stored) == {
        "Hello, I need help with billing",
        "Sure.\nWhat is the invoice number?",
        "Invoice 77, thanks",
    }
    assert stored["Invoice 77, thanks"].tags == ["invoice", "billing"]
    assert stored["Hello, I need help with billing"].tags == ["billing"]


def test_parquet_rows_are_validated(ctx: Context, conv: Bank, tmp_path: Path) -> None:
    source = tmp_path / "turns.parquet"
    table = pa.table(
        {
            "key": ["p1", "p1", "p1"],
            "speaker": ["ann", None, "bob"],
            "content": ["first turn", "nobody said this", ""],
            "metadata": ['{"n": 1}', None, None],
        }
    )
    pq.write_table(table, source)
    report = ingest(ctx, conv, [source])
    assert [(r["row"], r["code"]) for r in rejects_of(source)] == [
        (2, "missing_speaker"),
        (3, "empty_content"),
    ]
    assert report.stored == 1
    (entry,) = entries.read(ctx, conv)
    assert (entry.content, entry.metadata) == ("first turn", {"n": 1})


def test_general_bank_rejects_speakers_and_unknown_types(ctx: Context, inputs: Path) -> None:
    bank = banks.create(ctx, BankCreate(name="facts", type="general"))
    source = inputs / "general.jsonl"
    report = ingest(ctx, bank, [source])
    assert [(r["line"], r["code"]) for r in rejects_of(source)] == [
        (2, "unexpected_speaker"),
        (3, "invalid"),
    ]
    assert "hunch" in str(rejects_of(source)[1]["reason"])
    assert report.stored == 2
    assert {e.memory_type for e in entries.read(ctx, bank)} == {"preference", "fact"}


def test_reingest_adds_nothing(ctx: Context, conv: Bank, inputs: Path) -> None:
    paths = [inputs / "conversation.jsonl", inputs / "conversation.csv"]
    first = ingest(ctx, conv, paths)
    before = sorted(e.id for e in entries.read(ctx, conv))
    rejects_before = rejects_of(paths[0])

    second = ingest(ctx, conv, paths)

    assert first.stored == 7
    assert (second.stored, second.duplicates, second.rejected) == (0, 7, first.rejected)
    assert sorted(e.id for e in entries.read(ctx, conv)) == before
    assert rejects_of(paths[0]) == rejects_before


def test_stable_ids_keep_repeated_turns_apart_and_merge_true_duplicates(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = tmp_path / "repeats.jsonl"
    rows = [
        {"key": "k", "speaker": "ann", "content": "ok"},
        {"key": "k", "speaker": "ann", "content": "ok"},
        {"key": "k", "speaker": "ann", "content": "same", "created_at": "2026-10-01T00:00:00Z"},
        {"key": "k", "speaker": "ann", "content": "same", "created_at": "2026-10-01T00:00:00Z"},
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    report = ingest(ctx, conv, [source])
    assert (report.stored, report.duplicates) == (3, 1)
    item = EntryIn(key="k", speaker="ann", content="ok")
    assert {e.id for e in entries.read(ctx, conv)} >= {stable_id(item, 1), stable_id(item, 2)}


def test_folder_ingest_skips_rejects_and_hidden_files(
    ctx: Context, conv: Bank, inputs: Path
) -> None:
    (inputs / "general.jsonl").unlink()
    (inputs / ".hidden.jsonl").write_text('{"key": "x", "speaker": "a", "content": "no"}\n')
    (inputs / "notes.txt").write_text("not an input")
    first = ingest(ctx, conv, [inputs])
    assert [Path(f.path).name for f in first.files] == ["conversation.csv", "conversation.jsonl"]
    again = ingest(ctx, conv, [inputs])
    assert [Path(f.path).name for f in again.files] == ["conversation.csv", "conversation.jsonl"]
    assert again.stored == 0
    assert not any(e.content == "no" for e in entries.read(ctx, conv))


def test_one_rejects_file_for_all_inputs(ctx: Context, conv: Bank, inputs: Path) -> None:
    target = inputs / "out" / "all-rejects.jsonl"
    paths = [inputs / "conversation.jsonl", inputs / "conversation.csv"]
    report = ingest(ctx, conv, paths, rejects=target)
    lines = [json.loads(x) for x in target.read_text("utf-8").splitlines()]
    assert len(lines) == report.rejected == 13
    assert {Path(str(x["source"])).name for x in lines} == {
        "conversation.jsonl",
        "conversation.csv",
    }
    assert not (inputs / "conversation.jsonl.rejects.jsonl").exists()


def test_clean_run_removes_stale_rejects(ctx: Context, conv: Bank, tmp_path: Path) -> None:
    source = tmp_path / "turns.jsonl"
    source.write_text('{"key": "k", "content": "no speaker"}\n', "utf-8")
    ingest(ctx, conv, [source])
    assert len(rejects_of(source)) == 1
    source.write_text('{"key": "k", "speaker": "ann", "content": "fixed"}\n', "utf-8")
    report = ingest(ctx, conv, [source])
    assert report.rejected == 0
    assert not source.with_name("turns.jsonl.rejects.jsonl").exists()


def test_bad_paths_are_usage_errors(
    ctx: Context, conv: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InvalidInput, match=r"no such file or folder$"):
        ingest(ctx, conv, [tmp_path / "missing.jsonl"])
    monkeypatch.chdir(tmp_path)  # a relative path says where it was looked for
    with pytest.raises(
        InvalidInput, match=rf"in/x.jsonl: no such file .*\(looked up in {tmp_path}\)"
    ):
        ingest(ctx, conv, ["in/x.jsonl"])
    (tmp_path / "data.txt").write_text("x")
    with pytest.raises(InvalidInput, match="unsupported"):
        ingest(ctx, conv, [tmp_path / "data.txt"])
    assert entries.read(ctx, conv) == []


KILLER = textwrap.dedent(
    """
    import sys
    from memory import banks
    from memory.context import Context
    from memory.transfer.ingest import ingest
    from memory.store.lance import LanceStore
    from memory.testing import KillingEmbedder

    embedder = KillingEmbedder(384, after=int(sys.argv[3]))
    ctx = Context(store=LanceStore(sys.argv[1]), account="acme", embedder=lambda mode: embedder)
    ingest(ctx, banks.get(ctx, "support"), [sys.argv[2]], batch_size=50)
    """
)


@pytest.mark.process
def test_killed_ingest_reruns_to_completion_without_duplicates(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = tmp_path / "big.jsonl"
    rows = [
        {"key": f"k{i % 7}", "speaker": "ann" if i % 2 else "bob", "content": f"turn {i} ok"}
        for i in range(400)
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, ctx.store.uri, str(source), "3"],
        cwd=REPO,
        capture_output=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr.decode()
    assert len(entries.read(ctx, conv)) == 150

    report = ingest(ctx, conv, [source], batch_size=50)

    assert (report.stored, report.duplicates) == (250, 150)
    stored = entries.read(ctx, conv)
    assert len(stored) == len({e.id for e in stored}) == 400
    assert sorted(e.content for e in stored) == sorted(r["content"] for r in rows)


def test_reingest_skips_entries_folded_into_a_summary(ctx: Context, tmp_path: Path) -> None:
    completer = ScriptedCompleter()
    completer.enqueue(*["The facts so far are all true."] * 5)
    ctx.completer = lambda: completer
    bank = banks.create(
        ctx,
        BankCreate(
            name="compacted",
            type="conversation",
            max_turns=8,
            compaction_prompt="Keep the facts.",
        ),
    )
    source = tmp_path / "thread.jsonl"
    rows = [
        {"key": "t", "speaker": "ann", "content": f"fact number {i} is true"} for i in range(20)
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    ingest(ctx, bank, [source])
    after_first = entries.read(ctx, bank)
    assert len(completer.calls) == 1
    assert any(e.kind == "summary" for e in after_first)
    assert len(after_first) < 20

    again = ingest(ctx, bank, [source])

    assert again.stored == 0
    assert sorted(e.id for e in entries.read(ctx, bank)) == sorted(e.id for e in after_first)


@pytest.mark.parametrize("prompt", ["Keep the facts.", None], ids=["summary", "no-prompt"])
def test_report_says_what_inline_compaction_did(
    ctx: Context, tmp_path: Path, prompt: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    completer = ScriptedCompleter()
    completer.enqueue("The facts so far are all true.")
    ctx.completer = lambda: completer
    bank = banks.create(
        ctx,
        BankCreate(name="tally", type="conversation", max_turns=8, compaction_prompt=prompt),
    )
    source = tmp_path / "thread.jsonl"
    rows = [{"key": "t", "speaker": "ann", "content": f"fact {i} holds"} for i in range(20)]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    report = ingest(ctx, bank, [source])
    left = [e for e in entries.read(ctx, bank) if e.kind == "entry"]
    gone = 20 - len(left)
    tally = report.compaction
    assert report.stored == 20 and gone > 0 and tally.partitions == 1
    assert (tally.summarized, tally.dropped) == ((gone, 0) if prompt else (0, gone))
    lines = list(iter_report_lines(report))
    assert lines[-1].startswith("inline compaction: 1 partitions compacted")
    assert ("dropped (no compaction prompt)" in lines[-1]) == (prompt is None)
    from flows.ingest import report_notes

    assert any(f"{tally.dropped} dropped without a summary" in n for n in report_notes(report))


def test_reingest_after_repeated_compaction_revives_nothing(ctx: Context, tmp_path: Path) -> None:
    completer = ScriptedCompleter()
    completer.enqueue(*[f"summary {i}" for i in range(10)])
    ctx.completer = lambda: completer
    bank = banks.create(
        ctx,
        BankCreate(
            name="rolled", type="conversation", max_turns=4, compaction_prompt="Keep facts."
        ),
    )
    source = tmp_path / "thread.jsonl"
    rows = [{"key": "t", "speaker": "ann", "content": f"fact {i} holds"} for i in range(12)]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    ingest(ctx, bank, [source], batch_size=3)
    assert len(completer.calls) >= 2  # a later summary folded an earlier one in
    after_first = sorted(e.id for e in entries.read(ctx, bank))

    again = ingest(ctx, bank, [source], batch_size=3)

    assert again.stored == 0
    assert sorted(e.id for e in entries.read(ctx, bank)) == after_first


def test_cli_exit_codes(
    conv: Bank,
    inputs: Path,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    clean = inputs / "clean.jsonl"
    clean.write_text('{"key": "k", "speaker": "ann", "content": "fine"}\n', "utf-8")
    assert cli(["ingest", str(clean), "--bank", "support"]) == 0
    assert "1 stored" in capsys.readouterr().out

    assert cli(["ingest", str(inputs / "conversation.jsonl"), "--bank", "support", "--json"]) == 4
    out = json.loads(capsys.readouterr().out)
    assert out["totals"] == {
        "files": 1,
        "rows": 12,
        "stored": 4,
        "duplicates": 0,
        "updated": 0,
        "rejected": 8,
    }

    assert cli(["ingest", str(inputs / "nope.jsonl"), "--bank", "support"]) == 2
    assert cli(["ingest", str(clean), "--bank", "no-such-bank"]) == 3


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    """Write `rows` as JSON lines to `path`; returns the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


GOOD_ROWS: list[dict[str, object]] = [
    {"key": "k", "speaker": "ann", "content": "first"},
    {"key": "k", "speaker": "bob", "content": "second"},
]


def test_rejects_path_that_is_an_input_is_refused_and_the_input_kept(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "self.jsonl", GOOD_ROWS)
    before = source.read_bytes()
    with pytest.raises(InvalidInput, match="is one of the inputs"):
        ingest(ctx, conv, [source], rejects=source)
    alias = tmp_path / "sub" / ".." / "self.jsonl"
    (tmp_path / "sub").mkdir()
    with pytest.raises(InvalidInput, match="is one of the inputs"):
        ingest(ctx, conv, [source], rejects=alias)
    assert source.read_bytes() == before
    assert entries.read(ctx, conv) == []


def test_rejects_path_over_a_file_that_is_not_a_rejects_file_is_refused(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", [{"key": "k", "content": "no speaker"}])
    other = write_jsonl(tmp_path / "good.jsonl", GOOD_ROWS)
    before = other.read_bytes()
    with pytest.raises(InvalidInput, match="not a rejects file"):
        ingest(ctx, conv, [source], rejects=other)
    assert other.read_bytes() == before
    assert entries.read(ctx, conv) == []


def test_rejects_path_may_be_empty_or_an_earlier_rejects_file(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", [{"key": "k", "content": "no speaker"}])
    target = tmp_path / "all.jsonl"
    target.write_text("")
    assert ingest(ctx, conv, [source], rejects=target).rejected == 1
    again = ingest(ctx, conv, [source], rejects=target)  # holds rejected rows now: replaced
    assert again.rejected == 1
    assert [json.loads(x)["code"] for x in target.read_text("utf-8").splitlines()] == [
        "missing_speaker"
    ]


def test_rejects_path_inside_an_input_folder_must_be_skipped_by_folder_ingest(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(folder / "turns.jsonl", GOOD_ROWS)
    with pytest.raises(InvalidInput, match="inside the input folder"):
        ingest(ctx, conv, [folder], rejects=folder / "r.jsonl")
    assert entries.read(ctx, conv) == []

    report = ingest(ctx, conv, [folder], rejects=folder / "new" / "r.rejects.jsonl")

    assert (report.stored, report.rejected) == (2, 0)
    assert sorted(p.name for p in folder.iterdir()) == ["turns.jsonl"]  # nothing left behind


def test_unusable_rejects_path_is_a_usage_error_before_anything_is_stored(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "turns.jsonl", [*GOOD_ROWS, {"key": "k", "content": "x"}])
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InvalidInput, match="afile is a file, not a folder"):
        ingest(ctx, conv, [source], rejects=tmp_path / "afile" / "r.jsonl")
    with pytest.raises(InvalidInput, match="is a folder"):
        ingest(ctx, conv, [source], rejects=tmp_path)
    assert entries.read(ctx, conv) == []


def test_cli_refuses_bad_rejects_paths_with_one_line(
    ctx: Context,
    conv: Bank,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    source = write_jsonl(tmp_path / "self.jsonl", GOOD_ROWS)
    (tmp_path / "afile").write_text("x")
    for rejects in (str(source), str(tmp_path / "afile" / "r.jsonl")):
        assert cli(["ingest", str(source), "--bank", "support", "--rejects", rejects]) == 2
        err = capsys.readouterr().err
        assert err.startswith("membank: error: rejects") or "not a folder" in err
        assert err.count("\n") == 1
    assert len(source.read_text("utf-8").splitlines()) == 2
    assert entries.read(ctx, conv) == []


def test_unterminated_csv_quote_rejects_the_rest_and_keeps_the_rows_before(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = tmp_path / "unterminated.csv"
    source.write_text(
        "key,speaker,content\n"
        "q,ann,good row before\n"
        'q,bob,"a closed\nmultiline field"\n'
        'q,bob,"oops forgot to close\n'
        "q,bob,second row\n"
        "q,bob,third row\n",
        "utf-8",
    )
    report = ingest(ctx, conv, [source])

    (reject,) = rejects_of(source)
    assert (reject["line"], reject["row"], reject["code"]) == (5, 3, "bad_csv")
    assert "quote opened on line 5" in str(reject["reason"])
    assert str(reject["raw"]).startswith('q,bob,"oops forgot to close\nq,bob,second row')
    assert (report.stored, report.rejected) == (2, 1)
    assert sorted(e.content for e in entries.read(ctx, conv)) == [
        "a closed\nmultiline field",
        "good row before",
    ]


def test_unterminated_quote_in_the_csv_header_rejects_the_file(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = tmp_path / "header.csv"
    source.write_text('key,"speaker,content\nq,ann,hello\n', "utf-8")
    report = ingest(ctx, conv, [source])
    (reject,) = rejects_of(source)
    assert (reject["line"], reject["code"]) == (1, "bad_csv")
    assert "quote opened on line 1" in str(reject["reason"])
    assert (report.stored, report.rejected) == (0, 1)


def test_csv_header_naming_a_column_twice_rejects_the_file(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = tmp_path / "duphdr.csv"
    source.write_text("key,speaker,content,content\ng1,ann,a,b\ng1,ann,c,d\n", "utf-8")
    report = ingest(ctx, conv, [source])
    (reject,) = rejects_of(source)
    assert (reject["line"], reject["row"], reject["code"]) == (1, None, "bad_csv")
    assert "'content' appears more than once" in str(reject["reason"])
    assert (report.rows, report.stored, report.rejected) == (1, 0, 1)
    assert entries.read(ctx, conv) == []


def test_one_id_on_two_different_rows_rejects_the_second(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    first = {"id": "same-1", "key": "g1", "speaker": "ann", "content": "first version"}
    second = {**first, "content": "second version, different text"}
    source = write_jsonl(tmp_path / "dupid.jsonl", [first, second, first])
    report = ingest(ctx, conv, [source], batch_size=1)

    (reject,) = rejects_of(source)
    assert (reject["line"], reject["code"]) == (2, "duplicate_id")
    assert f"{source} line 1" in str(reject["reason"])
    assert (report.stored, report.duplicates, report.rejected) == (1, 1, 1)
    (entry,) = entries.read(ctx, conv)
    assert (entry.id, entry.content) == ("same-1", "first version")


def test_created_at_more_than_a_day_ahead_is_rejected(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    # the fixed clock reads 2026-11-01T12:00:00Z
    times = [
        "0001-01-01T00:00:00Z",
        "2026-11-02T11:00:00Z",
        "2026-11-02T13:00:00Z",
        "2099-01-01T00:00:00Z",
        "9999-12-31T23:59:59-05:00",
        "0001-01-01T00:00:00+05:00",
    ]
    rows = [
        {"key": "d", "speaker": "ann", "content": f"row {i}", "created_at": when}
        for i, when in enumerate(times)
    ]
    source = write_jsonl(tmp_path / "dates.jsonl", rows)
    report = ingest(ctx, conv, [source])

    rejects = rejects_of(source)
    assert [(r["line"], r["code"]) for r in rejects] == [
        (3, "invalid"),
        (4, "invalid"),
        (5, "invalid"),
        (6, "invalid"),
    ]
    assert "2026-11-02T13:00:00+00:00 is in the future: at most one day" in str(
        rejects[0]["reason"]
    )
    assert "out of range" in str(rejects[3]["reason"])
    assert report.stored == 2
    assert sorted(e.content for e in entries.read(ctx, conv)) == ["row 0", "row 1"]


INGESTER = textwrap.dedent(
    """
    import sys
    import time
    from pathlib import Path
    from memory import banks
    from memory.context import Context
    from memory.transfer.ingest import ingest
    from memory.store.lance import LanceStore
    from memory.testing import HashingEmbedder

    class Rendezvous(HashingEmbedder):
        # both runs check the first batch's ids before either stores it

        def embed(self, texts):
            here, other = Path(sys.argv[3]), Path(sys.argv[4])
            if not here.exists():
                here.touch()
                deadline = time.monotonic() + 120
                while not other.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            return super().embed(texts)

    embedder = Rendezvous(384)
    ctx = Context(store=LanceStore(sys.argv[1]), account="acme", embedder=lambda mode: embedder)
    report = ingest(ctx, banks.get(ctx, "support"), [sys.argv[2]], batch_size=50)
    print(report.stored, report.duplicates)
    """
)


@pytest.mark.process
def test_two_concurrent_ingests_of_one_file_store_each_row_once(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    rows = [
        {"id": f"row-{i}", "key": f"k{i % 5}", "speaker": "ann", "content": f"turn {i}"}
        for i in range(300)
    ]
    source = write_jsonl(tmp_path / "same.jsonl", rows)
    command = [sys.executable, "-c", INGESTER, ctx.store.uri, str(source)]
    marks = [str(tmp_path / "first-batch-a"), str(tmp_path / "first-batch-b")]
    runs = [
        subprocess.Popen(
            [*command, here, other],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for here, other in (marks, marks[::-1])
    ]
    outcomes = [run.communicate(timeout=600) for run in runs]
    for run, (_, err) in zip(runs, outcomes, strict=True):
        assert run.returncode == 0, err.decode()

    stored = entries.read(ctx, conv)
    assert len(stored) == len({e.id for e in stored}) == 300
    counts = [tuple(map(int, out.split())) for out, _ in outcomes]
    assert sum(new for new, _ in counts) == 300  # each row counted stored by one run only
    assert all(new + known == 300 for new, known in counts)


def test_an_ingest_a_full_disk_stops_says_how_many_rows_it_stored(
    ctx: Context,
    conv: Bank,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 25: a stopped ingest printed no count of the rows it had stored."""
    import errno

    from memory.testing import failing_after

    rows = tmp_path / "turns.jsonl"
    lines = [
        json.dumps({"id": f"t{i}", "key": f"c{i % 3}", "speaker": "ann", "content": f"turn {i}"})
        for i in range(120)
    ]
    rows.write_text("\n".join(lines) + "\n", "utf-8")
    full = OSError(errno.ENOSPC, "No space left on device (os error 28)")
    store = ctx.store
    monkeypatch.setattr(store, "add_new_rows", failing_after(2, store.add_new_rows, full))

    code = cli(["ingest", str(rows), "--bank", "support", "--batch-size", "40"])

    err = capsys.readouterr().err
    assert code == 1
    assert "after storing 80 rows" in err
    assert "disk full: free space" in err
    assert len(entries.read(ctx, conv)) == 80  # two batches committed, the third not
    monkeypatch.undo()
    assert cli(["ingest", str(rows), "--bank", "support", "--batch-size", "40"]) == 0
    assert len(entries.read(ctx, conv)) == 120  # the rerun stores the rest, nothing twice


def test_progress_gets_the_total_rows_first_so_a_bar_can_show_time_left(
    ctx: Context, conv: Bank, inputs: Path, tmp_path: Path
) -> None:
    parquet = tmp_path / "more.parquet"
    pq.write_table(
        pa.table({"key": ["p"] * 4, "speaker": ["ann"] * 4, "content": list("abcd")}), parquet
    )
    files = [inputs / "conversation.csv", inputs / "conversation.jsonl", parquet]
    calls: list[tuple[int, int | None]] = []
    report = ingest(
        ctx, conv, files, batch_size=2, progress=lambda count, of=None: calls.append((count, of))
    )
    assert calls[0] == (0, report.rows)  # bad rows count too: they are read
    assert sum(count for count, _ in calls) == report.rows
    assert all(of is None for _, of in calls[1:])
