#!/usr/bin/env bash
# Smoke test of dlq-redrive on a REAL AWS account (docs/smoke-test.md). Never run by CI.
#
# Deploys the pipeline and the example stack (a throwaway `orders` queue and its DLQ, registered
# with MonitoredDlq), dead-letters a few messages and one poison message, waits for the alarm ->
# triage -> incident, stops the approval-waiting run triage started, redrives pre-approved through
# `dlq redrive` (parking the poison), checks the report and the bodies, un-parks the poison, fails a
# sample, cancels a running move task, and tears everything down. Each of park, un-park, the
# failed run (RecordFailure, execution-ended) and the cancel uses a permission no other step does.
#
# Needs: Node.js 20+, npm ci done, the AWS CLI v2, jq, credentials for a TEST account (bootstrapped
# for CDK), and SMOKE_ACCOUNT_ID set to that account's id (a guard against the wrong profile).
# Usage: SMOKE_ACCOUNT_ID=123456789012 AWS_REGION=eu-west-1 scripts/smoke-aws.sh [--keep|--list]
#   --keep   leave the stacks deployed (for a look in the console); tear down later with
#            `npx cdk destroy --all --force` and the retained resources listed at the end.
#   --list   print the steps and exit (touches nothing; the script's own test reads it).
set -euo pipefail

STEPS=(
  "deploy the pipeline and the example stack"
  "register the throwaway queue for a pre-approved start"
  "dead-letter the messages, and send one poison message straight to the DLQ (no source: parked)"
  "wait for the DLQ alarm -> triage -> incident"
  "stop the run triage started (it waits for a Slack approval)"
  "dry run, then the redrive: Park parks the poison, sample, ramp (pre-approved)"
  "check the report (redriven, parked 1) and the bodies"
  "un-park the poison back to the source queue (the mover reads the parking queue)"
  "fail a sample: dead-letter the sample copies again during verification (SampleFailed, execution-ended)"
  "cancel a running move task (dlq cancel during the ramp; the run ends Cancelled)"
  "tear down"
)
step() { say "$1/${#STEPS[@]} ${STEPS[$(($1 - 1))]}"; }
if [[ "${1:-}" == "--list" ]]; then
  for i in "${!STEPS[@]}"; do printf '%d. %s\n' "$((i + 1))" "${STEPS[$i]}"; done
  exit 0
fi

MESSAGES=${SMOKE_MESSAGES:-5}
KEEP=${1:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dlq-smoke.XXXXXX")
say() { printf '[%s] %s\n' "$(date -u +%H:%M:%SZ)" "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

for tool in aws jq npx; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done
: "${AWS_REGION:?set AWS_REGION}"
: "${SMOKE_ACCOUNT_ID:?set SMOKE_ACCOUNT_ID to the test account id}"
caller=$(aws sts get-caller-identity --query Account --output text)
[[ "$caller" == "$SMOKE_ACCOUNT_ID" ]] || fail "credentials are for account $caller, not SMOKE_ACCOUNT_ID=$SMOKE_ACCOUNT_ID"
export CDK_DEFAULT_ACCOUNT=$caller CDK_DEFAULT_REGION=$AWS_REGION

teardown() {
  if [[ "$KEEP" == "--keep" ]]; then say "--keep: stacks left deployed"; return; fi
  step ${#STEPS[@]}
  npx cdk destroy --all --force >&2 || say "cdk destroy failed: remove the stacks DlqRedriveExample and DlqRedrivePipeline by hand"
  say "retained on purpose (delete by hand when done): the DynamoDB table (deletion protection on:"
  say "  aws dynamodb update-table --table-name \$TABLE --no-deletion-protection-enabled, then delete-table)"
  say "  and the Slack secret (aws secretsmanager delete-secret --secret-id \$SECRET --force-delete-without-recovery)"
}
trap teardown EXIT

step 1
say "   account $caller, Region $AWS_REGION"
npx cdk deploy --all --require-approval never --outputs-file "$WORK/outputs.json" >&2
export TABLE_NAME STATE_MACHINE_ARN
TABLE_NAME=$(jq -r '.DlqRedrivePipeline.TableName' "$WORK/outputs.json")
STATE_MACHINE_ARN=$(jq -r '.DlqRedrivePipeline.StateMachineAliasArn' "$WORK/outputs.json")
# The example stack's two queues (logical ids Orders... and OrdersDlq...); physical ids are URLs.
queues=$(aws cloudformation describe-stack-resources --stack-name DlqRedriveExample \
  --query "StackResources[?ResourceType=='AWS::SQS::Queue'].[LogicalResourceId,PhysicalResourceId]" --output json)
DLQ_URL=$(jq -r '.[] | select(.[0] | startswith("OrdersDlq")) | .[1]' <<< "$queues")
SOURCE_URL=$(jq -r '.[] | select((.[0] | startswith("Orders")) and (.[0] | startswith("OrdersDlq") | not)) | .[1]' <<< "$queues")
[[ "$SOURCE_URL" == https://* && "$DLQ_URL" == https://* ]] || fail "example queues not found in DlqRedriveExample: $queues"
DLQ_ARN=$(aws sqs get-queue-attributes --queue-url "$DLQ_URL" --attribute-names QueueArn --query Attributes.QueueArn --output text)
SOURCE_ARN=$(aws sqs get-queue-attributes --queue-url "$SOURCE_URL" --attribute-names QueueArn --query Attributes.QueueArn --output text)
say "   table $TABLE_NAME, source $SOURCE_URL, DLQ $DLQ_ARN"

step 2
npx dlq registrations --json | jq --arg arn "$DLQ_ARN" '.[] | select(.registration.dlqArn == $arn) | .registration' > "$WORK/registration.json"
[[ -s "$WORK/registration.json" ]] || fail "the example DLQ has no valid registration (npx dlq registrations)"
npx dlq register "$DLQ_ARN" --file "$WORK/registration.json" --allow-pre-approved --sample-size 2 \
  --ramp-rates 1,5 --dwell-seconds 30 --json > /dev/null

step 3
: > "$WORK/sent.jsonl"
for i in $(seq 1 "$MESSAGES"); do
  body=$(jq -cn --arg id "smoke-$i-$RANDOM" --arg n "$i" '{orderId: $id, n: ($n|tonumber), note: "dlq-redrive smoke test"}')
  aws sqs send-message --queue-url "$SOURCE_URL" --message-body "$body" > /dev/null
  printf '%s\n' "$body" >> "$WORK/sent.jsonl"
done
for _ in $(seq 1 12); do
  aws sqs receive-message --queue-url "$SOURCE_URL" --max-number-of-messages 10 --visibility-timeout 1 --wait-time-seconds 1 > /dev/null || true
  sleep 2
  depth=$(aws sqs get-queue-attributes --queue-url "$DLQ_URL" --attribute-names ApproximateNumberOfMessages --query Attributes.ApproximateNumberOfMessages --output text)
  [[ "$depth" -ge "$MESSAGES" ]] && break
done
[[ "$depth" -ge "$MESSAGES" ]] || fail "only $depth of $MESSAGES messages reached the DLQ"
POISON=$(jq -cn --arg id "smoke-poison-$RANDOM" '{orderId: $id, note: "dlq-redrive smoke test: no source queue"}')
aws sqs send-message --queue-url "$DLQ_URL" --message-body "$POISON" > /dev/null

step 4
INCIDENT=""
for _ in $(seq 1 60); do
  INCIDENT=$(npx dlq incidents --json | jq -r --arg arn "$DLQ_ARN" '[.[] | select(.dlqArn == $arn)][0].incidentId // empty')
  [[ -n "$INCIDENT" ]] && break
  sleep 10
done
[[ -n "$INCIDENT" ]] || fail "no incident for $DLQ_ARN after 10 minutes (check the alarm and the triage logs)"
say "   incident $INCIDENT"

step 5
for arn in $(aws stepfunctions list-executions --state-machine-arn "${STATE_MACHINE_ARN%:live}" --status-filter RUNNING --query 'executions[].executionArn' --output text); do
  npx dlq cancel "$arn" --by smoke-test --reason "smoke test: redriven pre-approved instead" --wait-seconds 300 >&2 || true
done

step 6
npx dlq redrive "$INCIDENT" --dry-run >&2
npx dlq redrive "$INCIDENT" --approved-by smoke-test --by smoke-test --verify-margin-seconds 10 --watch --json > "$WORK/run.json" \
  || fail "the redrive did not succeed: $(jq -r '.run.cause // .run.error // "see above"' "$WORK/run.json" 2>/dev/null)"

step 7
npx dlq show "$INCIDENT" --json > "$WORK/show.json"
jq -e --argjson n "$MESSAGES" '.redrive.outcome == "completed" and .redrive.redriven == $n and .redrive.parked == 1 and (.redrive.missing // 0) == 0 and .redrive.balanced != false' "$WORK/show.json" > /dev/null \
  || fail "report: $(jq -c '.redrive' "$WORK/show.json")"
jq -e '[.audit[].kind] | index("run-started") != null and index("run-ended") != null' "$WORK/show.json" > /dev/null || fail "audit trail incomplete"
npx dlq envelopes "$INCIDENT" --export "$WORK/export.jsonl" > /dev/null
diff <(jq -r 'select(.type != "export-header") | .body' "$WORK/export.jsonl" | sort) <({ cat "$WORK/sent.jsonl"; printf '%s\n' "$POISON"; } | sort) \
  || fail "exported bodies differ from the bodies sent"
# No consumer runs in the example stack: the redriven messages wait in the source queue.
back=()
for _ in 1 2 3; do
  out=$(aws sqs receive-message --queue-url "$SOURCE_URL" --max-number-of-messages 10 --wait-time-seconds 5 --query 'Messages[].Body' --output json)
  while IFS= read -r b; do back+=("$b"); done < <(jq -r '.[]?' <<< "$out")
done
diff <(printf '%s\n' "${back[@]}" | sort -u) <(sort "$WORK/sent.jsonl") || fail "the source queue does not hold exactly the bodies sent"

step 8
npx dlq unpark "$INCIDENT" --destination-arn "$SOURCE_ARN" --approved-by smoke-test --by smoke-test --watch --json > "$WORK/unpark.json" \
  || fail "the un-park did not succeed: $(jq -r '.run.cause // .run.error // "see above"' "$WORK/unpark.json" 2>/dev/null)"
out=$(aws sqs receive-message --queue-url "$SOURCE_URL" --max-number-of-messages 10 --wait-time-seconds 5 --query 'Messages[].Body' --output json)
jq -e --arg p "$POISON" 'index($p) != null' <<< "$out" > /dev/null || fail "the un-parked poison is not in the source queue"

# The next two runs need a new incident: dead-letter a second batch and wait for triage again.
next_incident() {
  local before=$1 found=""
  for i in $(seq 1 "$MESSAGES"); do
    aws sqs send-message --queue-url "$SOURCE_URL" --message-body "$(jq -cn --arg n "$i" --arg r "$RANDOM" '{n: ($n|tonumber), round: $r}')" > /dev/null
  done
  drain_to_dlq
  for _ in $(seq 1 60); do
    found=$(npx dlq incidents --json | jq -r --arg arn "$DLQ_ARN" --arg old "$before" '[.[] | select(.dlqArn == $arn and .incidentId != $old)][0].incidentId // empty')
    [[ -n "$found" ]] && break
    sleep 10
  done
  [[ -n "$found" ]] || fail "no new incident for $DLQ_ARN after 10 minutes"
  for arn in $(aws stepfunctions list-executions --state-machine-arn "${STATE_MACHINE_ARN%:live}" --status-filter RUNNING --query 'executions[].executionArn' --output text); do
    npx dlq cancel "$arn" --by smoke-test --reason "smoke test" --wait-seconds 300 >&2 || true
  done
  printf '%s' "$found"
}
# Receives from the source queue without deleting until SQS dead-letters (maxReceiveCount 5).
drain_to_dlq() {
  for _ in $(seq 1 12); do
    aws sqs receive-message --queue-url "$SOURCE_URL" --max-number-of-messages 10 --visibility-timeout 1 --wait-time-seconds 1 > /dev/null || true
    sleep 2
  done
}

step 9
SECOND=$(next_incident "$INCIDENT")
name="smoke-sample-fails-$RANDOM"
npx dlq redrive "$SECOND" --name "$name" --approved-by smoke-test --by smoke-test --verify-margin-seconds 120 >&2
drain_to_dlq   # the sample copies reach the DLQ again while VerifySample waits
npx dlq watch "$name" --json > "$WORK/sample-failed.json" || true
jq -e '.status == "FAILED"' "$WORK/sample-failed.json" > /dev/null || fail "the run with failed samples ended $(jq -r .status "$WORK/sample-failed.json")"
npx dlq show "$SECOND" --json | jq -e '.redrive.outcome == "sample-failed"' > /dev/null || fail "the run was not recorded sample-failed"

step 10
name="smoke-cancel-$RANDOM"
npx dlq redrive "$SECOND" --name "$name" --approved-by smoke-test --by smoke-test --verify-margin-seconds 10 >&2
for _ in $(seq 1 60); do
  npx dlq watch "$name" --json > "$WORK/cancel.json" 2>/dev/null & watcher=$!
  sleep 10; kill "$watcher" 2>/dev/null || true
  handle=$(aws sqs list-message-move-tasks --source-arn "$DLQ_ARN" --query "Results[?Status=='RUNNING'].TaskHandle | [0]" --output text)
  [[ -n "$handle" && "$handle" != "None" ]] && break
done
[[ -n "$handle" && "$handle" != "None" ]] || fail "no move task ran for $name"
npx dlq cancel "$name" --by smoke-test --reason "smoke test: cancel a running move task" --wait-seconds 600 >&2 \
  || fail "dlq cancel of $name failed"
status=$(aws sqs list-message-move-tasks --source-arn "$DLQ_ARN" --query 'Results[0].Status' --output text)
[[ "$status" == "CANCELLED" || "$status" == "CANCELLING" ]] || fail "the move task is $status, not cancelled"

say "passed: $MESSAGES messages dead-lettered, triaged, redriven byte for byte, report balanced; the poison parked and un-parked; a failed sample and a cancelled move task (files in $WORK)"
