"""Case images as chat content parts for vision models (litellm's OpenAI message format)."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from ..core.case import Image
from ..llm.errors import RequestError


def reference(image: Image) -> str:
    """How transcripts name an image: its URL or its path."""
    return image.url or str(image.path)


def image_part(image: Image) -> dict[str, Any]:
    """One ``image_url`` content part; a local file is sent inline as a data URL.

    A file that cannot be read raises :class:`RequestError` naming it, so the encounter ends
    as an *error* outcome rather than a diagnosis made without the image.
    """
    if image.url:
        return {"type": "image_url", "image_url": {"url": image.url}}
    path = Path(str(image.path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RequestError(f"cannot load image {path}: {exc.strerror or exc}") from exc
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if not mime.startswith("image/"):
        raise RequestError(f"cannot load image {path}: not an image file ({mime})")
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}


def with_images(text: str, images: list[Image]) -> str | list[dict[str, Any]]:
    """A message content: plain text, or text followed by the images' parts."""
    if not images:
        return text
    return [{"type": "text", "text": text}, *(image_part(i) for i in images)]
