"""OpenAPI links between operations: how an answer's ids feed the next request (a client reads them; schemathesis's
stateful phase follows them to chain requests: upload, then its job, its system, its upload)."""
from __future__ import annotations


def _to(operation_id: str, **parameters: str) -> dict:
    return {"operationId": operation_id, "parameters": parameters}


def _study(source: str) -> dict:
    return {name: _to(name, study_id=source) for name in
            ("getStudy", "openStudy", "closeStudy", "exportStudy", "getResults", "listScores", "setStudySystems")}


LINKS: dict[str, dict[str, dict[str, dict]]] = {
    "uploadPredictions": {"201": {
        "getJob": _to("getJob", job_id="$response.body#/jobs/0"),
        "getUpload": _to("getUpload", upload_id="$response.body#/upload"),
        "getSystem": _to("getSystem", system_id="$response.body#/systems/0/id"),
        "listSystemQuestionValues": _to("listSystemQuestionValues", system_id="$response.body#/systems/0/id"),
    }},
    "listSystems": {"200": {"getSystem": _to("getSystem", system_id="$response.body#/items/0/id")}},
    "getSystem": {"200": {
        "listSystemQuestionValues": _to("listSystemQuestionValues", system_id="$response.body#/id"),
    }},
    "listJobs": {"200": {"getJob": _to("getJob", job_id="$response.body#/items/0/id")}},
    "createJudgeRun": {"201": {"getJob": _to("getJob", job_id="$response.body#/job"),
                               "cancelJob": _to("cancelJob", job_id="$response.body#/job")}},
    "createRaterRun": {"201": {"getJob": _to("getJob", job_id="$response.body#/job")}},
    "createGenerationRun": {"201": {"getJob": _to("getJob", job_id="$response.body#/job")}},
    "cancelJob": {"200": {"resumeJob": _to("resumeJob", job_id="$response.body#/id")}},
    "listStudies": {"200": _study("$response.body#/items/0/id")},
    "createStudy": {"201": _study("$response.body#/id")},
    "getStudy": {"200": {"exportStudy": _to("exportStudy", study_id="$response.body#/id"),
                         "getResults": _to("getResults", study_id="$response.body#/id")}},
}
