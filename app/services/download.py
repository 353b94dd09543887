"""Fetch L-Eval's human-evaluation folder over HTTPS before importing it."""
from __future__ import annotations

import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

HUMAN_EVAL_DIR = "Predictions/human_eval"
HUMAN_EVAL_FILES = (
    "claude.gpt4.ref.jsonl",
    "chatglm2-6b-8k.pred.jsonl",
    "claude-100k.pred.jsonl",
    "gpt4-32k.pred.jsonl",
    "llama2-13b-chat-4k.pred.jsonl",
    "longchat-13b-16k-flash.pred.jsonl",
    "turbo-16k-0613.pred.jsonl",
    "vicuna-7b-2k.pred.jsonl",
)
MAX_BYTES = 64 * 1024 * 1024


class DownloadError(RuntimeError):
    pass


def download_human_eval(base_url: str, dest: Path, *, timeout: float = 60.0) -> Path:
    """Download every human-eval file into dest/human_eval; all or nothing."""
    target = dest / "human_eval"
    dest.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="download-", dir=dest))
    try:
        for name in HUMAN_EVAL_FILES:
            url = f"{base_url.rstrip('/')}/{HUMAN_EVAL_DIR}/{name}"
            (staging / name).write_bytes(_fetch(url, timeout))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _fetch(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "leval-studio"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise DownloadError(f"{url}: {getattr(exc, 'reason', exc)}") from None
    if len(data) > MAX_BYTES:
        raise DownloadError(f"{url}: larger than {MAX_BYTES // (1024 * 1024)} MB")
    return data
