//! The MPLP v1.0 schemas (`schemas/v2/`) as shapes: one static per schema object.
//! Field lists, required flags and enumerations follow the official JSON files.

use super::shape::{Field, ObjectShape, ValueShape as S};
use crate::model::{
    ConfirmStatus, ContextStatus, CrossCutting, DecisionStatus, PlanStatus, RefModule,
    SegmentStatus, StepStatus, TargetType, TraceStatus,
};

/// `common/metadata.schema.json`
pub(crate) static META: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("protocol_version", S::SemVer),
        Field::required("schema_version", S::SemVer),
        Field::optional("created_at", S::Timestamp),
        Field::optional("created_by", S::String),
        Field::optional("updated_at", S::Timestamp),
        Field::optional("updated_by", S::String),
        Field::optional(
            "tags",
            S::Array {
                items: &S::String,
                min_items: 0,
                unique: true,
            },
        ),
        Field::optional(
            "cross_cutting",
            S::Array {
                items: &S::Enum(CrossCutting::NAMES),
                min_items: 0,
                unique: true,
            },
        ),
    ],
};

/// `common/common-types.schema.json#/definitions/Ref`
static REF: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("id", S::Id),
        Field::required("module", S::Enum(RefModule::NAMES)),
        Field::optional("description", S::String),
    ],
};

/// The `governance` object of Confirm, Context and Trace.
static GOVERNANCE: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::optional("lifecyclePhase", S::String),
        Field::optional("truthDomain", S::String),
        Field::optional("locked", S::Bool),
        Field::optional("lastConfirmRef", S::Object(&REF)),
    ],
};

/// `common/trace-base.schema.json`
static TRACE_BASE: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("trace_id", S::Id),
        Field::required("span_id", S::Id),
        Field::optional("parent_span_id", S::Id),
        Field::optional("context_id", S::Id),
        Field::optional("attributes", S::AnyObject),
    ],
};

/// `common/events.schema.json`
static EVENT: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("event_id", S::Id),
        Field::required("event_type", S::EventType),
        Field::required("source", S::String),
        Field::required("timestamp", S::Timestamp),
        Field::optional("trace_id", S::Id),
        Field::optional("data", S::ObjectOrNull),
    ],
};

const EVENTS: S = S::Array {
    items: &S::Object(&EVENT),
    min_items: 0,
    unique: false,
};

/// `mplp-confirm.schema.json#/$defs/confirm_decision_core`
static DECISION: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("decision_id", S::Id),
        Field::required("status", S::Enum(DecisionStatus::NAMES)),
        Field::required("decided_by_role", S::String),
        Field::required("decided_at", S::Timestamp),
        Field::optional("reason", S::String),
    ],
};

/// `mplp-confirm.schema.json`
pub(crate) static CONFIRM: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("meta", S::Object(&META)),
        Field::optional("governance", S::Object(&GOVERNANCE)),
        Field::required("confirm_id", S::Id),
        Field::required("target_type", S::Enum(TargetType::NAMES)),
        Field::required("target_id", S::Id),
        Field::required("status", S::Enum(ConfirmStatus::NAMES)),
        Field::required("requested_by_role", S::String),
        Field::required("requested_at", S::Timestamp),
        Field::optional("reason", S::String),
        Field::optional(
            "decisions",
            S::Array {
                items: &S::Object(&DECISION),
                min_items: 0,
                unique: false,
            },
        ),
        Field::optional("trace", S::Object(&TRACE_BASE)),
        Field::optional("events", EVENTS),
    ],
};

/// `mplp-plan.schema.json#/$defs/plan_step_core`
static PLAN_STEP: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("step_id", S::Id),
        Field::required("description", S::NonEmptyString),
        Field::required("status", S::Enum(StepStatus::NAMES)),
        Field::optional(
            "dependencies",
            S::Array {
                items: &S::Id,
                min_items: 0,
                unique: false,
            },
        ),
        Field::optional("agent_role", S::String),
        Field::optional("order_index", S::Count),
    ],
};

/// `mplp-plan.schema.json`
pub(crate) static PLAN: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("meta", S::Object(&META)),
        Field::required("plan_id", S::Id),
        Field::required("context_id", S::Id),
        Field::required("title", S::NonEmptyString),
        Field::required("objective", S::NonEmptyString),
        Field::required("status", S::Enum(PlanStatus::NAMES)),
        Field::required(
            "steps",
            S::Array {
                items: &S::Object(&PLAN_STEP),
                min_items: 1,
                unique: false,
            },
        ),
        Field::optional("trace", S::Object(&TRACE_BASE)),
        Field::optional("events", EVENTS),
    ],
};

/// `mplp-context.schema.json` `root` (open to extra fields).
static CONTEXT_ROOT: ObjectShape = ObjectShape {
    closed: false,
    fields: &[
        Field::required("domain", S::String),
        Field::required("environment", S::String),
        Field::optional("entry_point", S::String),
    ],
};

/// `mplp-context.schema.json`
pub(crate) static CONTEXT: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("meta", S::Object(&META)),
        Field::optional("governance", S::Object(&GOVERNANCE)),
        Field::required("context_id", S::Id),
        Field::required("root", S::Object(&CONTEXT_ROOT)),
        Field::required("title", S::NonEmptyString),
        Field::optional("summary", S::String),
        Field::required("status", S::Enum(ContextStatus::NAMES)),
        Field::optional(
            "tags",
            S::Array {
                items: &S::NonEmptyString,
                min_items: 0,
                unique: false,
            },
        ),
        Field::optional("language", S::String),
        Field::optional("owner_role", S::String),
        Field::optional("constraints", S::AnyObject),
        Field::optional("created_at", S::Timestamp),
        Field::optional("updated_at", S::Timestamp),
        Field::optional("trace", S::Object(&TRACE_BASE)),
        Field::optional("events", EVENTS),
    ],
};

/// `mplp-trace.schema.json#/$defs/trace_segment_core`
static TRACE_SEGMENT: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("segment_id", S::Id),
        Field::optional("parent_segment_id", S::Id),
        Field::required("label", S::String),
        Field::required("status", S::Enum(SegmentStatus::NAMES)),
        Field::optional("started_at", S::Timestamp),
        Field::optional("finished_at", S::Timestamp),
        Field::optional("attributes", S::AnyObject),
    ],
};

/// `mplp-trace.schema.json`
pub(crate) static TRACE: ObjectShape = ObjectShape {
    closed: true,
    fields: &[
        Field::required("meta", S::Object(&META)),
        Field::optional("governance", S::Object(&GOVERNANCE)),
        Field::required("trace_id", S::Id),
        Field::required("context_id", S::Id),
        Field::optional("plan_id", S::Id),
        Field::required("root_span", S::Object(&TRACE_BASE)),
        Field::required("status", S::Enum(TraceStatus::NAMES)),
        Field::optional("started_at", S::Timestamp),
        Field::optional("finished_at", S::Timestamp),
        Field::optional(
            "segments",
            S::Array {
                items: &S::Object(&TRACE_SEGMENT),
                min_items: 0,
                unique: false,
            },
        ),
        Field::optional("events", EVENTS),
    ],
};

/// `learning/mplp-learning-sample-core.schema.json` `meta` (open), with the
/// learning invariants' enumerations.
static LEARNING_META: ObjectShape = ObjectShape {
    closed: false,
    fields: &[
        Field::optional("source_flow_id", S::NonEmptyString),
        Field::optional(
            "source_event_ids",
            S::Array {
                items: &S::Id,
                min_items: 0,
                unique: false,
            },
        ),
        Field::optional("project_id", S::Id),
        Field::optional(
            "human_feedback_label",
            S::Enum(&["approved", "rejected", "not_reviewed"]),
        ),
        Field::optional(
            "quality_score",
            S::Number {
                min: Some(0.0),
                max: Some(1.0),
            },
        ),
    ],
};

/// `learning/mplp-learning-sample-core.schema.json` plus `learning-invariants.yaml`
/// (uuid-v4 `sample_id`, non-empty `sample_family`).
pub(crate) static LEARNING_SAMPLE: ObjectShape = ObjectShape {
    closed: false,
    fields: &[
        Field::required("sample_id", S::Id),
        Field::required("sample_family", S::NonEmptyString),
        Field::required("created_at", S::Timestamp),
        Field::required("input", S::AnyObject),
        Field::optional("state", S::AnyObject),
        Field::required("output", S::AnyObject),
        Field::optional("meta", S::Object(&LEARNING_META)),
    ],
};

#[cfg(test)]
mod tests {
    //! The shapes must say exactly what the vendored official schemas say.
    use super::*;
    use crate::validate::shape::ValueShape;
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn schema(file: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mplp/schemas")
            .join(file);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn names(v: Option<&Value>) -> BTreeSet<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect()
    }

    /// Compares fields, required flags, closedness and enumerations.
    fn same(object: &Value, shape: &ObjectShape, what: &str) {
        let properties = object["properties"].as_object().unwrap();
        let schema_fields: BTreeSet<String> = properties.keys().cloned().collect();
        let shape_fields: BTreeSet<String> =
            shape.fields.iter().map(|f| f.name.to_owned()).collect();
        assert_eq!(shape_fields, schema_fields, "{what}: fields");
        let required: BTreeSet<String> = shape
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.to_owned())
            .collect();
        assert_eq!(required, names(object.get("required")), "{what}: required");
        let closed = object.get("additionalProperties") == Some(&Value::Bool(false));
        assert_eq!(shape.closed, closed, "{what}: closed");
        for field in shape.fields {
            let property = &properties[field.name];
            let enumeration = property
                .get("enum")
                .or_else(|| property.pointer("/items/enum"));
            let shape_enum = match &field.shape {
                ValueShape::Enum(names) => Some(*names),
                ValueShape::Array {
                    items: ValueShape::Enum(names),
                    ..
                } => Some(*names),
                _ => None,
            };
            if let Some(enumeration) = enumeration {
                let expected: Vec<&str> = enumeration
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(
                    shape_enum.map(<[&str]>::to_vec),
                    Some(expected),
                    "{what}.{}: enum",
                    field.name
                );
            }
        }
    }

    #[test]
    fn shapes_match_official_schemas() {
        let confirm = schema("mplp-confirm.schema.json");
        same(&confirm, &CONFIRM, "confirm");
        same(
            &confirm["$defs"]["confirm_decision_core"],
            &DECISION,
            "decision",
        );
        same(
            &confirm["properties"]["governance"],
            &GOVERNANCE,
            "governance",
        );
        let plan = schema("mplp-plan.schema.json");
        same(&plan, &PLAN, "plan");
        same(&plan["$defs"]["plan_step_core"], &PLAN_STEP, "plan step");
        let context = schema("mplp-context.schema.json");
        same(&context, &CONTEXT, "context");
        same(
            &context["properties"]["root"],
            &CONTEXT_ROOT,
            "context root",
        );
        let trace = schema("mplp-trace.schema.json");
        same(&trace, &TRACE, "trace");
        same(
            &trace["$defs"]["trace_segment_core"],
            &TRACE_SEGMENT,
            "trace segment",
        );
        same(&schema("common/metadata.schema.json"), &META, "meta");
        same(&schema("common/events.schema.json"), &EVENT, "event");
        same(
            &schema("common/trace-base.schema.json"),
            &TRACE_BASE,
            "trace base",
        );
        same(
            &schema("common/common-types.schema.json")["definitions"]["Ref"],
            &REF,
            "ref",
        );
        let learning = schema("learning/mplp-learning-sample-core.schema.json");
        same(&learning, &LEARNING_SAMPLE, "learning sample");
    }
}
