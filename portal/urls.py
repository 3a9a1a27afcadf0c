from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.utils.translation import gettext_lazy as _

from portal import audit_views, i18n, oidc_views, views
from portal.signin import AdminSignInForm, SignInForm

admin.site.site_header = _("Knowledge Belt administration")
admin.site.site_title = "Knowledge Belt"
# The admin's login form counts and throttles like /login/ (one counter for both).
admin.site.login_form = AdminSignInForm

handler500 = "portal.capacity.server_error"

urlpatterns = [
    # /healthz itself is answered by portal.health.HealthCheckMiddleware, before sessions.
    path("healthz/services", views.health_services, name="health_services"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            redirect_authenticated_user=True, authentication_form=SignInForm
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("oidc/authenticate/", oidc_views.start, name="oidc_authentication_init"),
    path("oidc/callback/", oidc_views.callback, name="oidc_authentication_callback"),
    path("profile/", views.profile, name="profile"),
    path("language/", i18n.set_language, name="set_language"),
    path("audit/", audit_views.audit_log, name="audit_log"),
    path("profile/tokens/", views.create_api_token, name="create_api_token"),
    path("profile/tokens/<int:pk>/revoke/", views.revoke_api_token, name="revoke_api_token"),
    path("admin/", admin.site.urls),
    path("", include("chat.urls")),
    path("", include("feedback.urls")),
    path("", include("evaluation.urls")),
    path("", include("scenarios.urls")),
    path("", include("knowledge.urls")),
]
