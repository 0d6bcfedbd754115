/*
 * prometheus.h - Prometheus metrics of the service (GET /metrics, prometheus.c;
 * docs/dashboard.md lists every series).  Internal to src/api.
 */
#ifndef RELISH_API_PROMETHEUS_H
#define RELISH_API_PROMETHEUS_H

#include "api/route.h"

/* One finished request: its route (NULL: none matched), HTTP status and
 * duration.  Called by http.c for every request, on its HTTP thread
 * (thread-safe). */
void api_prometheus_observe(const api_route *r, int status, double seconds);

/* The text exposition (format 0.0.4) of every metric of prometheus.c's
 * table, malloc'd into *out / *len. */
int api_prometheus_text(api_req *rq, char **out, size_t *len, rl_err *err);

#endif
