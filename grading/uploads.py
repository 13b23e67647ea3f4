from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload


class BundleSizeLimit(FileUploadHandler):
    """Stops reading an upload as soon as it passes BUNDLE_MAX_BYTES, whatever Content-Length said.

    It runs first for every upload (settings.FILE_UPLOAD_HANDLERS), before any view or CSRF check reads
    the body, and marks the request so that the view can answer 413.
    """

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > settings.BUNDLE_MAX_BYTES:
            self.request.bundle_too_large = True
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size):
        return None
