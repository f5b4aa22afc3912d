# Celery's app is loaded with Django, so that @shared_task binds to it (the scale-out profile).
try:
    from .celery import app as celery_app
except ImportError:  # celery is an optional extra ("scale"); the embedded profile runs without it
    celery_app = None

__all__ = ("celery_app",)
