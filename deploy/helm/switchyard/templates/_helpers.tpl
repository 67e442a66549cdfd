{{/* Names and labels shared by the templates. */}}

{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "switchyard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "switchyard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "switchyard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The Secret the pods read: the operator's, or the chart's. */}}
{{- define "switchyard.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else -}}
{{- include "switchyard.fullname" . -}}
{{- end -}}
{{- end -}}

{{/* Refuses settings that cannot work: several pods on per-pod SQLite databases, a reader or HA mode without Postgres. */}}
{{- define "switchyard.validate" -}}
{{- if not .Values.secrets.existingSecret -}}
{{- if and (not .Values.postgres.url) (or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1)) -}}
{{- fail "postgres.url is required for more than one pod (each pod would otherwise keep its own SQLite database)" -}}
{{- end -}}
{{- if and (not .Values.postgres.url) (or .Values.postgres.writerHa .Values.postgres.reader.host) -}}
{{- fail "postgres.writerHa and postgres.reader need postgres.url" -}}
{{- end -}}
{{- end -}}
{{- end -}}
