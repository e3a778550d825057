// Package inputs renders what a Job's module run receives: the generated
// root module (main.tf.json) and the role's inputs (terraform.tfvars.json).
// The root declares a partial kubernetes backend that init's flags
// complete, one variable per input, calls the image's module as
// module "role" { source = "../../module" }, and re-exports the role's
// contract outputs as sensitive outputs.
package inputs
