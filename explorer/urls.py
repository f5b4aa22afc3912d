from django.urls import path

from . import views

app_name = "explorer"

urlpatterns = [
    path("", views.session_list, name="session_list"),
    path("sessions/new/", views.session_new, name="session_new"),
    path("sessions/<uuid:session_id>/", views.session_detail, name="session_detail"),
]
