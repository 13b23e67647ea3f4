import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _one_grading_process_per_core(**_) -> None:
    """Each pool process grades with GRADING_THREADS threads (default 1): machines scale by running one
    worker process per core, and threads inside each (Arrow's CSV reader, BLAS) would only fight them."""
    from django.conf import settings

    threads = settings.GRADING_THREADS
    try:
        import pyarrow

        pyarrow.set_cpu_count(threads)
    except ImportError:
        pass
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)
