//! Generates the code of every bundled schema, of ROS `.msg` files and of WPILib struct schemas,
//! as a user's `build.rs` would: with owned variable-size types only when this crate's `alloc`
//! feature is on.

fn main() {
    logspec_codegen::Builder::new()
        .alloc(std::env::var_os("CARGO_FEATURE_ALLOC").is_some())
        .compile(&[
            "../../schemas/usvlog.toml",
            "../../schemas/rlog.toml",
            "../../schemas/carla.toml",
            "../../schemas/wpilog.toml",
            // The code generator's test schemas, which use every construct of the schema language.
            "../../codegen/tests/schemas/everything.toml",
            "../../codegen/tests/schemas/c_all_kinds.toml",
        ])
        .unwrap_or_else(|e| e.exit());
    // The `.msg` and WPILib struct front ends follow the same choice (views only without `alloc`).
    let msgs = [
        "../../codegen/tests/msg/std_msgs/msg/Header.msg",
        "../../codegen/tests/msg/demo/msg/Point.msg",
        "../../codegen/tests/msg/demo/msg/Sample.msg",
    ];
    let builder = logspec_codegen::Builder::new().alloc(std::env::var_os("CARGO_FEATURE_ALLOC").is_some());
    builder.compile_msgs("demo_msgs", &msgs).unwrap_or_else(|e| e.exit());
    builder
        .compile_struct_schemas(
            "geometry",
            &[
                ("Translation2d", "double x;double y"),
                ("Rotation2d", "double value"),
                ("Pose2d", "Translation2d translation;Rotation2d rotation"),
            ],
        )
        .unwrap_or_else(|e| e.exit());
}
