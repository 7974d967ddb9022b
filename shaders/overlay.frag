#version 450 core
// Flat colour with alpha: the overlay's lines and quads.

in vec4 v_colour;
out vec4 o_colour;

void main() {
  o_colour = v_colour;
}
