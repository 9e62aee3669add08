//! Paints a timeline draw list with WebGL2: the worker's packed rectangles
//! go to the GPU as one instance buffer, unchanged, and one instanced draw
//! call paints them all, so the cost does not grow with the rectangle
//! count the way one `fillRect` call per rectangle does. Colours come from
//! a palette uniform indexed by each rectangle's colour code.

use wasm_bindgen::JsCast;
use web_sys::{
    OffscreenCanvas, WebGl2RenderingContext as Gl, WebGlBuffer, WebGlProgram, WebGlShader,
    WebGlUniformLocation, WebGlVertexArrayObject,
};

use crate::shared::timeline_view::{CODE_COUNTER, CODE_HIGHLIGHT, RECT_STRIDE};

const VERTEX: &str = r#"#version 300 es
layout(location = 0) in vec3 a_rect;   // row, x0, x1 (CSS px)
layout(location = 1) in vec3 a_extra;  // count, colour code, height in rows
uniform vec2 u_size;                   // canvas size in CSS px
uniform float u_row_px;
uniform vec3 u_palette[PALETTE];
out vec3 v_colour;
void main() {
    int corner = gl_VertexID;
    float cx = (corner == 1 || corner == 2 || corner == 4) ? 1.0 : 0.0;
    float cy = (corner == 2 || corner == 4 || corner == 5) ? 1.0 : 0.0;
    int code = int(a_extra.y + 0.5);
    float x0 = a_rect.y;
    float x1 = max(a_rect.z, x0 + 1.0);
    float bottom = (a_rect.x + 1.0) * u_row_px;
    float top = bottom - u_row_px + 1.0;
    float bot = bottom - 1.0;
    if (code == COUNTER) {
        top = bottom - a_extra.z * u_row_px;
        bot = bottom;
    } else if (code == HIGHLIGHT) {
        top += 2.0;
        bot -= 2.0;
    }
    float x = mix(x0, x1, cx);
    float y = mix(top, bot, cy);
    gl_Position = vec4(x / u_size.x * 2.0 - 1.0, 1.0 - y / u_size.y * 2.0, 0.0, 1.0);
    v_colour = u_palette[clamp(code, 0, PALETTE - 1)];
}
"#;

const FRAGMENT: &str = r#"#version 300 es
precision mediump float;
in vec3 v_colour;
out vec4 colour;
void main() { colour = vec4(v_colour, 1.0); }
"#;

pub struct GlRects {
    gl: Gl,
    program: WebGlProgram,
    vao: WebGlVertexArrayObject,
    buffer: WebGlBuffer,
    u_size: WebGlUniformLocation,
    u_row_px: WebGlUniformLocation,
}

fn compile(gl: &Gl, kind: u32, src: &str) -> Option<WebGlShader> {
    let shader = gl.create_shader(kind)?;
    gl.shader_source(&shader, src);
    gl.compile_shader(&shader);
    if gl
        .get_shader_parameter(&shader, Gl::COMPILE_STATUS)
        .as_bool()
        != Some(true)
    {
        let log = gl.get_shader_info_log(&shader).unwrap_or_default();
        web_sys::console::error_1(&format!("tracelane: shader: {log}").into());
        return None;
    }
    Some(shader)
}

/// `#rrggbb` → RGB in 0..1.
fn rgb(hex: &str) -> [f32; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0x8c8c8c);
    [
        ((v >> 16) & 255) as f32 / 255.0,
        ((v >> 8) & 255) as f32 / 255.0,
        (v & 255) as f32 / 255.0,
    ]
}

/// Does this context rasterise on the CPU? (`failIfMajorPerformanceCaveat`
/// does not catch every software path, e.g. Chromium's SwiftShader.)
fn is_software(gl: &Gl) -> bool {
    // WEBGL_debug_renderer_info's UNMASKED_RENDERER_WEBGL.
    const UNMASKED_RENDERER: u32 = 0x9246;
    let name = match gl.get_extension("WEBGL_debug_renderer_info") {
        Ok(Some(_)) => gl.get_parameter(UNMASKED_RENDERER).ok(),
        _ => gl.get_parameter(Gl::RENDERER).ok(),
    }
    .and_then(|v| v.as_string())
    .unwrap_or_default()
    .to_lowercase();
    [
        "swiftshader",
        "llvmpipe",
        "softpipe",
        "software",
        "microsoft basic render",
    ]
    .iter()
    .any(|s| name.contains(s))
}

impl GlRects {
    /// A renderer on `canvas`, or `None` where WebGL2 is missing — or, with
    /// `hardware_only`, where it would run on a software rasteriser
    /// (SwiftShader, llvmpipe): measured here, Canvas2D is faster there for
    /// dense views. The caller then paints with Canvas2D.
    pub fn new(canvas: &OffscreenCanvas, palette: &[&str], hardware_only: bool) -> Option<GlRects> {
        let options = crate::js::object(&[
            ("antialias", false.into()),
            ("alpha", true.into()),
            ("failIfMajorPerformanceCaveat", hardware_only.into()),
        ]);
        if hardware_only {
            // Probe on a canvas of its own: once the page's canvas has a
            // WebGL context it can never get the 2D one the fallback needs.
            let probe = OffscreenCanvas::new(1, 1).ok()?;
            let gl: Gl = probe
                .get_context_with_context_options("webgl2", &options)
                .ok()??
                .dyn_into()
                .ok()?;
            let software = is_software(&gl);
            if let Ok(Some(lose)) = gl.get_extension("WEBGL_lose_context") {
                let _ = js_sys::Reflect::get(&lose, &"loseContext".into())
                    .ok()
                    .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                    .map(|f| f.call0(&lose));
            }
            if software {
                return None;
            }
        }
        let gl: Gl = canvas
            .get_context_with_context_options("webgl2", &options)
            .ok()??
            .dyn_into()
            .ok()?;
        let vertex = VERTEX
            .replace("PALETTE", &palette.len().to_string())
            .replace("COUNTER", &CODE_COUNTER.to_string())
            .replace("HIGHLIGHT", &CODE_HIGHLIGHT.to_string());
        let vs = compile(&gl, Gl::VERTEX_SHADER, &vertex)?;
        let fs = compile(&gl, Gl::FRAGMENT_SHADER, FRAGMENT)?;
        let program = gl.create_program()?;
        gl.attach_shader(&program, &vs);
        gl.attach_shader(&program, &fs);
        gl.link_program(&program);
        if gl
            .get_program_parameter(&program, Gl::LINK_STATUS)
            .as_bool()
            != Some(true)
        {
            return None;
        }
        let vao = gl.create_vertex_array()?;
        let buffer = gl.create_buffer()?;
        gl.bind_vertex_array(Some(&vao));
        gl.bind_buffer(Gl::ARRAY_BUFFER, Some(&buffer));
        let stride = (RECT_STRIDE * 4) as i32;
        gl.enable_vertex_attrib_array(0);
        gl.vertex_attrib_pointer_with_i32(0, 3, Gl::FLOAT, false, stride, 0);
        gl.vertex_attrib_divisor(0, 1);
        gl.enable_vertex_attrib_array(1);
        gl.vertex_attrib_pointer_with_i32(1, 3, Gl::FLOAT, false, stride, 12);
        gl.vertex_attrib_divisor(1, 1);
        gl.bind_vertex_array(None);
        let u_size = gl.get_uniform_location(&program, "u_size")?;
        let u_row_px = gl.get_uniform_location(&program, "u_row_px")?;
        let u_palette = gl.get_uniform_location(&program, "u_palette")?;
        gl.use_program(Some(&program));
        let colours: Vec<f32> = palette.iter().flat_map(|c| rgb(c)).collect();
        gl.uniform3fv_with_f32_array(Some(&u_palette), &colours);
        Some(GlRects {
            gl,
            program,
            vao,
            buffer,
            u_size,
            u_row_px,
        })
    }

    /// Paints the packed rectangles (`RECT_STRIDE` floats each) on a canvas
    /// of `width` × `height` CSS pixels whose backing store is already sized.
    pub fn paint(&self, rects: &[f32], width: f64, height: f64, row_px: f64) {
        let gl = &self.gl;
        gl.viewport(0, 0, gl.drawing_buffer_width(), gl.drawing_buffer_height());
        gl.clear_color(0.0, 0.0, 0.0, 0.0);
        gl.clear(Gl::COLOR_BUFFER_BIT);
        let n = rects.len() / RECT_STRIDE;
        if n == 0 {
            return;
        }
        gl.use_program(Some(&self.program));
        gl.uniform2f(Some(&self.u_size), width as f32, height as f32);
        gl.uniform1f(Some(&self.u_row_px), row_px as f32);
        gl.bind_vertex_array(Some(&self.vao));
        gl.bind_buffer(Gl::ARRAY_BUFFER, Some(&self.buffer));
        // SAFETY: the view over wasm memory is used at once, before anything
        // could allocate (and so move that memory).
        unsafe {
            let view = js_sys::Float32Array::view(rects);
            gl.buffer_data_with_array_buffer_view(Gl::ARRAY_BUFFER, &view, Gl::STREAM_DRAW);
        }
        gl.draw_arrays_instanced(Gl::TRIANGLES, 0, 6, n as i32);
        gl.bind_vertex_array(None);
    }
}
