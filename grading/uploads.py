from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload


class BundleSizeLimit(FileUploadHandler):
    """Stops reading an upload as soon as it passes BUNDLE_MAX_BYTES, whatever Content-Length said.

    It runs first for every upload (settings.FILE_UPLOAD_HANDLERS), before any view or CSRF check reads
    the body, and marks the request so that the view can answer 413.
    """

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.BUNDLE_MAX_BYTES:
            self.request.bundle_too_large = True  # type: ignore[union-attr]  # an upload always has its request
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
