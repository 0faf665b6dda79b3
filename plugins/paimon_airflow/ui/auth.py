"""Airflow's own authentication for the page (a FastAPI dependency).

Airflow 3.3 mounts a plugin's FastAPI app under the api-server as is: nothing protects its routes
(``airflow.api_fastapi.app.init_plugins`` only checks the prefix). So every route of
:mod:`paimon_airflow.ui.app` depends on :func:`airflow_user`, which does what the api-server's own
routes do (``airflow.api_fastapi.core_api.security.get_user`` + ``requires_access_view``):

* the JWT comes from ``Authorization: Bearer`` (REST clients), else from the UI's session cookie
  ``_token`` (the browser, also inside the UI's iframe);
* the configured auth manager validates it: no token or an expired one is **401**, an invalid
  one (bad signature, revoked) **403**;
* the user must be allowed the ``WEBSITE`` view (anyone who may use the Airflow UI), else **403**.

Airflow is imported inside the functions: importing the plugin (every Airflow process does)
stays cheap and free of api-server state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import HTTPException, Request, status

if TYPE_CHECKING:
    from airflow.api_fastapi.auth.managers.models.base_user import BaseUser

__all__ = ["airflow_user", "may_read_dag_xcoms"]


def _token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    from airflow.api_fastapi.auth.managers.base_auth_manager import COOKIE_NAME_JWT_TOKEN

    return request.cookies.get(COOKIE_NAME_JWT_TOKEN)


async def airflow_user(request: Request) -> BaseUser:
    """The Airflow user of the request; 401 without a valid token, 403 without UI access."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
    from airflow.api_fastapi.core_api.security import resolve_user_from_token

    user = await resolve_user_from_token(_token(request))
    if not get_auth_manager().is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise HTTPException(status_code=status.HTTP_403_FORBIDDEN, detail="Forbidden")
    return user


def may_read_dag_xcoms(user: BaseUser, dag_id: str) -> bool:
    """Whether ``user`` may read the XComs of ``dag_id`` (the auth manager decides)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails

    return bool(
        get_auth_manager().is_authorized_dag(
            method="GET", access_entity=DagAccessEntity.XCOM, details=DagDetails(id=dag_id), user=user
        )
    )
