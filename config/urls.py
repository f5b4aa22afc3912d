from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from explorer.login import throttled_login
from reasoning.api import api

admin.site.login = throttled_login(admin.site.login)  # before admin.site.urls reads it

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", throttled_login(auth_views.LoginView.as_view()), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("", include("explorer.urls")),
]
