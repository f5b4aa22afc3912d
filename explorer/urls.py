from django.urls import path

from . import views

app_name = "explorer"

urlpatterns = [
    path("", views.session_list, name="session_list"),
    path("sessions/statuses/", views.session_statuses, name="session_statuses"),
    path("sessions/new/", views.session_new, name="session_new"),
    path("sessions/new/auto-mode/", views.auto_mode, name="auto_mode"),
    path("sessions/<uuid:session_id>/", views.session_detail, name="session_detail"),
    path("sessions/<uuid:session_id>/report/", views.session_report, name="session_report"),
    path("sessions/<uuid:session_id>/beside-parent/", views.session_beside_parent, name="session_beside_parent"),
]
