# Lookout's service image: the `lookout` command, the Celery worker and beat.
# Built by docker-compose.yml; config/ and automations/ are mounted at run time.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY checks ./checks
COPY worker ./worker
RUN pip install . \
    && useradd --create-home --uid 10001 lookout \
    && mkdir -p /app/.lookout /app/config /app/automations \
    && chown -R lookout /app/.lookout

USER lookout
CMD ["lookout", "worker"]
